#!/bin/sh
# make.sh regenerates the TLS fixtures of this directory with the JDK's
# keytool (17) and openssl: see README.md for what each file is, its DN and
# its passwords. Run it from anywhere; it writes next to itself. The keys
# are random, so every run changes every file: commit them together.
set -eu
cd "$(dirname "$0")"
P=password
DAYS=7300 # 20 years
KT="keytool -noprompt"
rm -f ./*.ks ./*.ts ./*.p12 ./*.pem
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The CA: a self-signed key pair in ca.p12, its certificate in ca.pem.
$KT -genkeypair -alias ca -keyalg RSA -keysize 2048 -validity $DAYS \
    -dname "CN=Wharf Test CA,OU=Wharf,O=Test,C=FR" \
    -ext bc:c=ca:true -ext ku:c=keyCertSign,cRLSign \
    -keystore ca.p12 -storetype PKCS12 -storepass $P
$KT -exportcert -rfc -alias ca -keystore ca.p12 -storepass $P -file ca.pem

# keypair STORE TYPE ALIAS DNAME: a key pair in STORE, not yet signed.
keypair() {
    $KT -genkeypair -alias "$3" -keyalg RSA -keysize 2048 -validity $DAYS \
        -dname "$4" -keystore "$1" -storetype "$2" -storepass $P
}

# sign STORE ALIAS [gencert options]: the CA signs ALIAS's key, and the
# chain (the certificate, then the CA's) replaces its self-signed one.
sign() {
    store=$1 alias=$2
    shift 2
    $KT -certreq -alias "$alias" -keystore "$store" -storepass $P -file "$tmp/$alias.csr"
    $KT -gencert -alias ca -keystore ca.p12 -storepass $P -rfc \
        -infile "$tmp/$alias.csr" -outfile "$tmp/$alias.crt" "$@"
    cat "$tmp/$alias.crt" ca.pem > "$tmp/$alias.chain"
    $KT -importcert -alias "$alias" -file "$tmp/$alias.chain" -keystore "$store" -storepass $P
}

# pem P12 NAME: NAME.pem (the certificate) and NAME-key.pem (the private
# key, PKCS #8, unencrypted) from the PKCS12 store P12.
pem() {
    openssl pkcs12 -in "$1" -passin pass:$P -nokeys -clcerts | openssl x509 -out "$2.pem"
    openssl pkcs12 -in "$1" -passin pass:$P -nocerts -nodes | openssl pkey -out "$2-key.pem"
}

# The broker: broker.ks (JKS) and broker.p12 (PKCS12), the same key.
keypair broker.ks JKS broker "CN=broker,OU=Wharf,O=Test,C=FR"
sign broker.ks broker -validity $DAYS -ext san=dns:localhost,ip:127.0.0.1 \
    -ext eku=serverAuth,clientAuth -ext ku:c=digitalSignature,keyEncipherment
$KT -importkeystore -srckeystore broker.ks -srcstoretype JKS -srcstorepass $P \
    -destkeystore broker.p12 -deststoretype PKCS12 -deststorepass $P
# broker-keypass.ks: the same key whose password (keypass) differs from
# the store's (password), for keyStoreKeyPassword.
$KT -importkeystore -srckeystore broker.ks -srcstoretype JKS -srcstorepass $P \
    -srcalias broker -destkeystore broker-keypass.ks -deststoretype JKS \
    -deststorepass $P -destkeypass keypass
pem broker.p12 broker

# The truststores: the CA as a trusted certificate entry, for the broker
# (its trustStore, to verify clients) and for Java clients.
$KT -importcert -alias ca -file ca.pem -keystore broker.ts -storetype JKS -storepass $P
$KT -importcert -alias ca -file ca.pem -keystore broker-ts.p12 -storetype PKCS12 -storepass $P
cp broker.ts client.ts

# Clients signed by the CA: client1 and client2, JKS and PKCS12 and PEM.
for c in client1 client2; do
    keypair $c.ks JKS $c "CN=$c,OU=Wharf,O=Test,C=FR"
    sign $c.ks $c -validity $DAYS -ext eku=clientAuth -ext ku:c=digitalSignature,keyEncipherment
    $KT -importkeystore -srckeystore $c.ks -srcstoretype JKS -srcstorepass $P \
        -destkeystore $c.p12 -deststoretype PKCS12 -deststorepass $P
    pem $c.p12 $c
done

# An expired client, signed by the CA, valid on 2000-01-01 only.
keypair expired.p12 PKCS12 expired "CN=expired,OU=Wharf,O=Test,C=FR"
sign expired.p12 expired -startdate 2000/01/01 -validity 1 -ext eku=clientAuth
pem expired.p12 expired

# An untrusted client: self-signed, the CA never saw it.
keypair untrusted.p12 PKCS12 untrusted "CN=untrusted,OU=Wharf,O=Test,C=FR"
pem untrusted.p12 untrusted

rm -f ca.p12.old
ls -l

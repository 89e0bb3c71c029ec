// Package enc encrypts and decrypts the ENC(...) values of ActiveMQ's
// configuration files, as `activemq encrypt` and `activemq decrypt` do.
//
// ActiveMQ 5.17's console (activemq-console EncryptCommand and
// DecryptCommand) and its property placeholder use Jasypt's
// StandardPBEStringEncryptor with its defaults:
//
//   - algorithm PBEWithMD5AndDES: PKCS #5 v1.5 PBES1 (RFC 8018 §6.1), the
//     key and IV derived by 1000 iterations of MD5 over password || salt,
//     DES in CBC mode with PKCS #5 padding;
//   - an 8-byte random salt (Jasypt's salt is the cipher's block size);
//   - no IV prefix (Jasypt 1.9's default NoIvGenerator);
//   - plaintext encoded as UTF-8, the result base64(salt || ciphertext).
//
// The password must be printable ASCII (U+0020 to U+007E): Java's SunJCE
// PBEKey refuses anything else, so a value encrypted with another password
// could not be read by ActiveMQ.
//
// DES and MD5 are weak: an ENC() value hides a password from a casual
// reader of activemq.xml, nothing more. Wharf implements the scheme for
// compatibility with existing configurations only. The package uses the
// standard library only.
package enc

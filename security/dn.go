package security

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"strings"
	"unicode/utf16"
)

// javaDN renders a certificate's subject as ActiveMQ's
// CertificateLoginModule.getDistinguishedName sees it:
// X509Certificate.getSubjectDN().getName(), which is
// sun.security.x509.X500Name.toString(). That is NOT
// X500Principal.getName() (RFC 2253, "CN=a,O=b"): the RDNs are listed most
// specific first joined by ", ", the AVAs of a multi-valued RDN by " + ",
// keywords are X500Name's (CN C L ST O OU T IP STREET DC DNQ SURNAME
// GIVENNAME INITIALS GENERATION EMAILADDRESS UID SERIALNUMBER, else
// "OID." and the dotted OID), values are quoted ("...") when they contain , + = \n < > # ;
// \ or " or lead, trail or repeat blanks, with " and \ escaped, and a value
// that is not a string type is # and the lower-case hex of its DER
// encoding (checked against Java 17: testdata/dn). This is
// the form users.properties of TextFileCertificateLoginModule must hold:
// "client=CN=client, OU=Wharf, O=Example, C=US".
func javaDN(c *x509.Certificate) (string, error) {
	return javaDNFromRaw(c.RawSubject)
}

type rawAVA struct {
	Type  asn1.ObjectIdentifier
	Value asn1.RawValue
}

func javaDNFromRaw(raw []byte) (string, error) {
	var rdns []asn1.RawValue
	if _, err := asn1.Unmarshal(raw, &rdns); err != nil {
		return "", err
	}
	parts := make([]string, 0, len(rdns))
	for i := len(rdns) - 1; i >= 0; i-- {
		var avas []rawAVA
		if _, err := asn1.UnmarshalWithParams(rdns[i].FullBytes, &avas, "set"); err != nil {
			return "", err
		}
		s := make([]string, len(avas))
		for j, a := range avas {
			s[j] = javaAVA(a)
		}
		parts = append(parts, strings.Join(s, " + "))
	}
	return strings.Join(parts, ", "), nil
}

// javaKeywords is X500Name's OID-to-keyword map as AVAKeyword builds it
// (where two keywords share an OID the later one wins: ST, DNQ,
// EMAILADDRESS).
var javaKeywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.12":                   "T",
	"1.3.6.1.4.1.42.2.11.2.1":    "IP",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"2.5.4.46":                   "DNQ",
	"2.5.4.4":                    "SURNAME",
	"2.5.4.42":                   "GIVENNAME",
	"2.5.4.43":                   "INITIALS",
	"2.5.4.44":                   "GENERATION",
	"1.2.840.113549.1.9.1":       "EMAILADDRESS",
	"0.9.2342.19200300.100.1.1":  "UID",
	"2.5.4.5":                    "SERIALNUMBER",
}

func javaAVA(a rawAVA) string {
	oid := a.Type.String()
	kw, ok := javaKeywords[oid]
	if !ok {
		kw = "OID." + oid
	}
	val, isString := javaDERString(a.Value)
	if !isString {
		return kw + "=#" + hex.EncodeToString(a.Value.FullBytes)
	}
	return kw + "=" + javaQuoteValue(val)
}

// javaDERString is DerValue.getAsString: the string types, else not a
// string.
func javaDERString(v asn1.RawValue) (string, bool) {
	if v.Class != asn1.ClassUniversal {
		return "", false
	}
	b := v.Bytes
	switch v.Tag {
	case asn1.TagUTF8String:
		return strings.ToValidUTF8(string(b), "\uFFFD"), true
	case asn1.TagPrintableString, asn1.TagIA5String, 27 /* GeneralString */ :
		// Java decodes these as ASCII: bytes over 0x7f become U+FFFD.
		var sb strings.Builder
		for _, c := range b {
			if c > 0x7f {
				sb.WriteRune('\uFFFD')
			} else {
				sb.WriteByte(c)
			}
		}
		return sb.String(), true
	case asn1.TagT61String:
		// ISO-8859-1.
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c)
		}
		return string(r), true
	case asn1.TagBMPString:
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		}
		return string(utf16.Decode(u)), true
	case 28: // UniversalString, UTF-32BE
		r := make([]rune, len(b)/4)
		for i := range r {
			r[i] = rune(b[4*i])<<24 | rune(b[4*i+1])<<16 | rune(b[4*i+2])<<8 | rune(b[4*i+3])
		}
		return strings.ToValidUTF8(string(r), "\uFFFD"), true
	}
	return "", false
}

// isJavaPrintable is DerValue.isPrintableStringChar.
func isJavaPrintable(c rune) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	switch c {
	case ' ', '\'', '(', ')', '+', ',', '-', '.', '/', ':', '=', '?':
		return true
	}
	return false
}

// javaQuoteValue is AVA.toKeywordValueString's value part.
func javaQuoteValue(v string) string {
	const escapees = ",+=\n<>#;\\\""
	r := []rune(v)
	alreadyQuoted := len(r) > 1 && r[0] == '"' && r[len(r)-1] == '"'
	quoteNeeded := false
	previousWhite := false
	var sb strings.Builder
	for i, c := range r {
		if alreadyQuoted && (i == 0 || i == len(r)-1) {
			sb.WriteRune(c)
			continue
		}
		if isJavaPrintable(c) || strings.ContainsRune(escapees, c) {
			if !quoteNeeded && ((i == 0 && (c == ' ' || c == '\n')) || strings.ContainsRune(escapees, c)) {
				quoteNeeded = true
			}
			if c != ' ' && c != '\n' {
				if c == '"' || c == '\\' {
					sb.WriteByte('\\')
				}
				previousWhite = false
			} else {
				if !quoteNeeded && previousWhite {
					quoteNeeded = true
				}
				previousWhite = true
			}
			sb.WriteRune(c)
		} else {
			previousWhite = false
			sb.WriteRune(c)
		}
	}
	out := sb.String()
	if n := len(out); n > 0 && (out[n-1] == ' ' || out[n-1] == '\n') {
		quoteNeeded = true
	}
	if !alreadyQuoted && quoteNeeded {
		return `"` + out + `"`
	}
	return out
}

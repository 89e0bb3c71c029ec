package enc

import (
	"crypto/cipher"
	"crypto/des"
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

const (
	// Iterations is Jasypt's DEFAULT_KEY_OBTENTION_ITERATIONS, which
	// ActiveMQ's encrypt command does not change.
	Iterations = 1000
	// SaltBytes is the salt length: Jasypt uses the cipher's block size
	// (DES: 8 bytes), which PBES1 also requires.
	SaltBytes = 8
	// Algorithm is the only algorithm this package implements, Jasypt's
	// default and the one ActiveMQ uses without --algorithm.
	Algorithm = "PBEWithMD5AndDES"
)

// Encrypt encrypts plaintext (as UTF-8) with password and returns
// base64(salt || ciphertext), what `activemq encrypt --password password
// --input plaintext` prints after "Encrypted text: ". The salt is random,
// so two calls give different values. It fails only for a bad password
// (empty, or not printable ASCII) or if the system's random source fails.
func Encrypt(plaintext, password string) (string, error) {
	if err := checkPassword(password); err != nil {
		return "", err
	}
	salt := make([]byte, SaltBytes)
	if _, err := io.ReadFull(rand.Reader, salt); err != nil {
		return "", fmt.Errorf("enc: salt: %w", err)
	}
	return encrypt(plaintext, password, salt), nil
}

// encrypt is Encrypt with a given salt.
func encrypt(plaintext, password string, salt []byte) string {
	block, iv := derive(password, salt)
	// PKCS #5 padding: 1 to 8 bytes, each the pad length (RFC 8018 §6.1.1
	// step 4).
	pad := des.BlockSize - len(plaintext)%des.BlockSize
	buf := make([]byte, SaltBytes+len(plaintext)+pad)
	copy(buf, salt)
	body := buf[SaltBytes:]
	copy(body, plaintext)
	for i := len(plaintext); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(body, body)
	return base64.StdEncoding.EncodeToString(buf)
}

// Decrypt decrypts a value made by Encrypt or by `activemq encrypt` (the
// base64 text, without ENC( and )) with password. A wrong password or a
// damaged value gives ErrCannotDecrypt (the padding check fails, or the
// result is not UTF-8); text that is not base64 of salt || whole DES
// blocks gives ErrBadEncoding. It never panics.
func Decrypt(ciphertext, password string) (string, error) {
	if err := checkPassword(password); err != nil {
		return "", err
	}
	raw, err := decodeBase64(ciphertext)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadEncoding, err)
	}
	if len(raw) < SaltBytes+des.BlockSize || (len(raw)-SaltBytes)%des.BlockSize != 0 {
		return "", fmt.Errorf("%w: %d bytes, want an 8-byte salt and whole 8-byte blocks", ErrBadEncoding, len(raw))
	}
	block, iv := derive(password, raw[:SaltBytes])
	body := raw[SaltBytes:]
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(body, body)
	pad := int(body[len(body)-1])
	if pad < 1 || pad > des.BlockSize {
		return "", ErrCannotDecrypt
	}
	want := make([]byte, pad)
	for i := range want {
		want[i] = byte(pad)
	}
	if subtle.ConstantTimeCompare(body[len(body)-pad:], want) != 1 {
		return "", ErrCannotDecrypt
	}
	out := body[:len(body)-pad]
	// DEVIATION: Jasypt turns invalid UTF-8 into U+FFFD and returns it; a
	// Java string always encodes to valid UTF-8, so invalid bytes mean a
	// wrong password whose padding happened to check (about 1 in 256).
	if !utf8.Valid(out) {
		return "", fmt.Errorf("%w (the result is not UTF-8)", ErrCannotDecrypt)
	}
	return string(out), nil
}

// Unwrap returns the x of "ENC(x)" and true, or v and false when v is not
// an encrypted value. Like Jasypt's PropertyValueEncryptionUtils, it
// ignores leading and trailing spaces and control characters (Java's
// String.trim) around ENC(...).
func Unwrap(v string) (inner string, ok bool) {
	t := strings.TrimFunc(v, func(r rune) bool { return r <= ' ' })
	if len(t) < len("ENC()") || !strings.HasPrefix(t, "ENC(") || !strings.HasSuffix(t, ")") {
		return v, false
	}
	return t[len("ENC(") : len(t)-1], true
}

// derive is PBKDF1 with MD5 (RFC 8018 §5.1) as PBES1 uses it: T1 =
// MD5(P || S), Tn = MD5(Tn-1) for 1000 iterations; the DES key is the
// first 8 bytes, the IV the last 8 (§6.1.1 step 3). Java's SunJCE takes
// each password char as one byte, which checkPassword guarantees.
func derive(password string, salt []byte) (cipher.Block, []byte) {
	h := md5.New()
	h.Write([]byte(password))
	h.Write(salt)
	var dk [md5.Size]byte
	h.Sum(dk[:0])
	for i := 1; i < Iterations; i++ {
		dk = md5.Sum(dk[:])
	}
	block, err := des.NewCipher(dk[:8])
	if err != nil {
		// des.NewCipher fails only for a key that is not 8 bytes.
		panic("enc: " + err.Error())
	}
	return block, dk[8:]
}

// checkPassword refuses what Jasypt and SunJCE refuse: an empty password
// ("Password cannot be set empty") and one with a character outside
// U+0020 to U+007E (PBEKey: "Password is not ASCII").
func checkPassword(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrPassword)
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] > 0x7e {
			return fmt.Errorf("%w: byte %d is not printable ASCII (Java's PBEWithMD5AndDES accepts only U+0020 to U+007E)", ErrPassword, i)
		}
	}
	return nil
}

// decodeBase64 reads standard base64 with or without padding, ignoring
// white space (a value may be wrapped in an XML file).
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	if s == "" {
		return nil, fmt.Errorf("empty")
	}
	if strings.HasSuffix(s, "=") || len(s)%4 == 0 {
		return base64.StdEncoding.DecodeString(s)
	}
	return base64.RawStdEncoding.DecodeString(s)
}

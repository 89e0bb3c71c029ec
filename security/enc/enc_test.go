package enc

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wharf/internal/activemq"
)

// golden are values printed by Debian's ActiveMQ 5.17.2 (jasypt 1.9.3):
//
//	java -Dactivemq.home=/usr/share/activemq -Dactivemq.base=$TMP \
//	    -jar /usr/share/activemq/bin/activemq.jar encrypt --password P --input TEXT
var golden = []struct {
	password, plaintext, ciphertext string
}{
	{"secret", "hello", "v+53v73a2N/+RXg5VkXdYw=="},
	{"secret", "hello", "/R3ovd3Zr7JpTqz2dYkoOQ=="},
	{"activemq", "manager", "2+bWHBxnk3MmdioEXzgtqQ=="},
	{"secret", "", "CJoEXcgHASaiJ1iEbzMZ7Q=="},
	{"secret", "exactly8", "l29iaCnhWjpCLfK4j9gaHfq43oIF7QRn"},
	{"p@ss w0rd!~", "héllo wörld ✓ 日本", "w5Eu27vrbrnJgorwhYwGDg2zTIPaArqGTyeuht1EK4X+P3zO47JsTA=="},
	{"0123456789abcdefghij", "a somewhat longer plaintext of several DES blocks, 64+ bytes long.",
		"W8SEoTEQKQDctZpsZoNWqLMKmf9LeRnxrtyO3+hGgiU/kx4feGSce05ipvjAQoRkrg7HaRKA7c7qlZLVhcCvFdOryxz0dcmaUZADckwAp34="},
}

// TestEncDecryptActiveMQGolden: Decrypt reads what ActiveMQ encrypted.
func TestEncDecryptActiveMQGolden(t *testing.T) {
	for _, g := range golden {
		got, err := Decrypt(g.ciphertext, g.password)
		if err != nil || got != g.plaintext {
			t.Errorf("Decrypt(%q, %q) = %q, %v; want %q", g.ciphertext, g.password, got, err, g.plaintext)
		}
	}
}

// TestEncEncryptReproducesActiveMQ: with ActiveMQ's salt (the first 8
// bytes of its value), Encrypt gives ActiveMQ's value byte for byte.
func TestEncEncryptReproducesActiveMQ(t *testing.T) {
	for _, g := range golden {
		raw, err := decodeBase64(g.ciphertext)
		if err != nil {
			t.Fatal(err)
		}
		got := encrypt(g.plaintext, g.password, raw[:SaltBytes])
		if got != g.ciphertext {
			t.Errorf("encrypt(%q, %q) with ActiveMQ's salt = %q; want %q", g.plaintext, g.password, got, g.ciphertext)
		}
	}
}

// TestEncRoundTrip: what Encrypt makes, Decrypt reads with the same
// password; the salt is random, so two values of one text differ.
func TestEncRoundTrip(t *testing.T) {
	for _, tc := range []struct{ name, plaintext, password string }{
		{"empty text", "", "secret"},
		{"one block minus one", "1234567", "secret"},
		{"one block", "12345678", "secret"},
		{"unicode text", "mot de passe: «été» ✓", "pw"},
		{"every printable password byte", "x", " !\"#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c1, err := Encrypt(tc.plaintext, tc.password)
			if err != nil {
				t.Fatal(err)
			}
			c2, err := Encrypt(tc.plaintext, tc.password)
			if err != nil {
				t.Fatal(err)
			}
			if c1 == c2 {
				t.Errorf("two encryptions of %q are both %q: the salt is not random", tc.plaintext, c1)
			}
			for _, c := range []string{c1, c2} {
				got, err := Decrypt(c, tc.password)
				if err != nil || got != tc.plaintext {
					t.Errorf("Decrypt(Encrypt(%q)) = %q, %v", tc.plaintext, got, err)
				}
			}
		})
	}
}

// TestEncDecryptErrors: wrong passwords and damaged values give the
// package's errors, never a panic or a wrong text.
func TestEncDecryptErrors(t *testing.T) {
	const good = "v+53v73a2N/+RXg5VkXdYw==" // "hello" with "secret"
	for _, tc := range []struct {
		name, ciphertext, password string
		want                       error
	}{
		{"wrong password", good, "Secret", ErrCannotDecrypt},
		{"empty password", good, "", ErrPassword},
		{"non-ASCII password", good, "sécret", ErrPassword},
		{"control character in password", good, "sec\nret", ErrPassword},
		{"not base64", "not*base64!", "secret", ErrBadEncoding},
		{"empty value", "", "secret", ErrBadEncoding},
		{"salt only", "AAAAAAAAAAA=", "secret", ErrBadEncoding},
		{"partial block", "v+53v73a2N/+RXg5VkXd", "secret", ErrBadEncoding},
		{"last byte flipped", "v+53v73a2N/+RXg5VkXdYg==", "secret", ErrCannotDecrypt},
		{"ENC() wrapper left on", "ENC(" + good + ")", "secret", ErrBadEncoding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decrypt(tc.ciphertext, tc.password)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Decrypt(%q, %q) = %q, %v; want error %v", tc.ciphertext, tc.password, got, err, tc.want)
			}
		})
	}
	if _, err := Decrypt(good, "Secret"); err == nil || err.Error() != "enc: cannot decrypt: wrong password or damaged value" {
		t.Errorf("wrong password: error %v, want the exact text %q", err, ErrCannotDecrypt)
	}
	if _, err := Encrypt("x", ""); !errors.Is(err, ErrPassword) {
		t.Errorf("Encrypt with an empty password: %v, want %v", err, ErrPassword)
	}
	if _, err := Encrypt("x", "pässword"); !errors.Is(err, ErrPassword) {
		t.Errorf("Encrypt with a non-ASCII password: %v, want %v", err, ErrPassword)
	}
}

// TestEncDecryptLenientBase64: white space (a value wrapped in an XML
// file) and missing padding are accepted, as commons-codec accepts them.
func TestEncDecryptLenientBase64(t *testing.T) {
	for _, c := range []string{"v+53v73a2N/+RXg5VkXdYw", " v+53v73a2N/+\n RXg5VkXdYw==\n"} {
		if got, err := Decrypt(c, "secret"); err != nil || got != "hello" {
			t.Errorf("Decrypt(%q) = %q, %v; want hello", c, got, err)
		}
	}
}

// TestEncUnwrap: ENC(x) gives x, trimmed as Java's String.trim does;
// anything else is returned unchanged with false.
func TestEncUnwrap(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"ENC(abc=)", "abc=", true},
		{"  ENC(abc=)\n", "abc=", true},
		{"ENC()", "", true},
		{"ENC(abc", "ENC(abc", false},
		{"enc(abc)", "enc(abc)", false},
		{"abc", "abc", false},
		{"", "", false},
		{"ENC)", "ENC)", false},
	} {
		got, ok := Unwrap(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Unwrap(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzEncDecrypt: Decrypt never panics; whatever it accepts re-encrypts
// (with the same salt) to the same bytes, and Encrypt's output always
// decrypts back.
func FuzzEncDecrypt(f *testing.F) {
	for _, g := range golden {
		f.Add(g.ciphertext, g.password)
	}
	f.Add("", "secret")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA==", "x")
	f.Add("ENC(v+53v73a2N/+RXg5VkXdYw==)", "secret")
	f.Fuzz(func(t *testing.T, ciphertext, password string) {
		got, err := Decrypt(ciphertext, password)
		if err == nil {
			raw, derr := decodeBase64(ciphertext)
			if derr != nil {
				t.Fatalf("Decrypt accepted %q that decodeBase64 refuses: %v", ciphertext, derr)
			}
			again, _ := decodeBase64(encrypt(got, password, raw[:SaltBytes]))
			if !bytes.Equal(again, raw) {
				t.Fatalf("re-encrypting %q with the same salt gives %x, want %x", got, again, raw)
			}
		}
		if checkPassword(password) != nil {
			return
		}
		c, err := Encrypt(ciphertext, password)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decrypt(c, password)
		if err != nil && !strings.Contains(err.Error(), "not UTF-8") {
			t.Fatalf("Decrypt(Encrypt(%q)) = %v", ciphertext, err)
		}
		if err == nil && back != ciphertext {
			t.Fatalf("Decrypt(Encrypt(%q)) = %q", ciphertext, back)
		}
	})
}

// activemqConsole runs Debian's ActiveMQ console command (encrypt or
// decrypt) and returns its output, or skips the test when Java or
// ActiveMQ is missing. Debian has no bin/activemq script that runs
// console commands (/usr/bin/activemq is the init script), so this runs
// bin/activemq.jar as that script would: activemq.home and activemq.base
// set (the base, a temporary directory, need not hold a configuration
// for these commands), and LC_ALL=C.UTF-8 so that Java reads a non-ASCII
// --input as UTF-8. jasypt.jar is in lib/optional, which activemq.jar's
// class loader adds by itself.
func activemqConsole(t *testing.T, args ...string) string {
	t.Helper()
	jar := filepath.Join(activemq.Home, "bin", "activemq.jar")
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("ActiveMQ is not installed (%v): apt-get install activemq", err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java is not installed: apt-get install openjdk-17-jre-headless")
	}
	base := t.TempDir()
	cmd := exec.Command("java", append([]string{"-Dactivemq.home=" + activemq.Home, "-Dactivemq.base=" + base,
		"-Djava.io.tmpdir=" + base, "-jar", jar}, args...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("activemq %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// resultLine returns the text after prefix on the first line of out that
// starts with it.
func resultLine(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimRight(v, "\r")
		}
	}
	t.Fatalf("no %q line in ActiveMQ's output:\n%s", prefix, out)
	return ""
}

// TestEncActiveMQInterop: `activemq decrypt` reads what Wharf encrypted,
// and Wharf decrypts what `activemq encrypt` made.
func TestEncActiveMQInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM (3 s): not with -short")
	}
	const password, text = "s3cret pass~", "héllo ActiveMQ ✓"
	c, err := Encrypt(text, password)
	if err != nil {
		t.Fatal(err)
	}
	out := activemqConsole(t, "decrypt", "--password", password, "--input", c)
	if got := resultLine(t, out, "Decrypted text: "); got != text {
		t.Errorf("activemq decrypt of Wharf's %q = %q, want %q", c, got, text)
	}
	out = activemqConsole(t, "encrypt", "--password", password, "--input", text)
	c = resultLine(t, out, "Encrypted text: ")
	if got, err := Decrypt(c, password); err != nil || got != text {
		t.Errorf("Wharf's Decrypt of ActiveMQ's %q = %q, %v; want %q", c, got, err, text)
	}
}

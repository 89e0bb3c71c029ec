package main

import (
	"bytes"
	"strings"
	"testing"

	"wharf/security/enc"
)

// TestWharfCommandLineEncryptDecrypt: wharf encrypt prints ActiveMQ's
// "Encrypted text: " line with a value that decrypts back, wharf decrypt
// reads a value made by ActiveMQ 5.17 (with or without ENC()), and a
// wrong password is exit status 1 with the reason on stderr.
func TestWharfCommandLineEncryptDecrypt(t *testing.T) {
	code, out, errOut := runWharf(t, "encrypt", "--password", "secret", "--input", "hello world")
	c, ok := strings.CutPrefix(strings.TrimSuffix(out, "\n"), "Encrypted text: ")
	if code != 0 || !ok || errOut != "" {
		t.Fatalf("encrypt: exit %d, stdout %q, stderr %q; want 0, \"Encrypted text: ...\", nothing", code, out, errOut)
	}
	if p, err := enc.Decrypt(c, "secret"); err != nil || p != "hello world" {
		t.Fatalf("the printed value %q decrypts to %q, %v", c, p, err)
	}
	// "v+53v73a2N/+RXg5VkXdYw==" is ActiveMQ's encryption of "hello" with
	// "secret" (security/enc's golden values).
	for _, in := range []string{"v+53v73a2N/+RXg5VkXdYw==", "ENC(v+53v73a2N/+RXg5VkXdYw==)"} {
		code, out, errOut = runWharf(t, "decrypt", "--password", "secret", "--input", in)
		if code != 0 || out != "Decrypted text: hello\n" || errOut != "" {
			t.Errorf("decrypt %s: exit %d, stdout %q, stderr %q; want 0, %q, nothing", in, code, out, errOut, "Decrypted text: hello\n")
		}
	}
	code, out, errOut = runWharf(t, "decrypt", "--password", "wrong", "--input", "v+53v73a2N/+RXg5VkXdYw==")
	if want := "wharf: decrypt: enc: cannot decrypt: wrong password or damaged value\n"; code != 1 || out != "" || errOut != want {
		t.Errorf("decrypt with a wrong password: exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, out, errOut, want)
	}
}

// TestWharfCommandLineEncryptFlags: the password comes from
// ACTIVEMQ_ENCRYPTION_PASSWORD when --password is absent (as in
// ActiveMQ), --password wins over it, missing flags, other algorithms
// and bad passwords are errors that say what is wrong, and --help
// documents the variable.
func TestWharfCommandLineEncryptFlags(t *testing.T) {
	t.Setenv("ACTIVEMQ_ENCRYPTION_PASSWORD", "secret")
	var out bytes.Buffer
	if err := runEncrypt("decrypt", []string{"--input", "v+53v73a2N/+RXg5VkXdYw=="}, &out); err != nil || out.String() != "Decrypted text: hello\n" {
		t.Errorf("decrypt with the password from the environment: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := runEncrypt("decrypt", []string{"--password", "other", "--input", "v+53v73a2N/+RXg5VkXdYw=="}, &out); err == nil {
		t.Errorf("--password other was not used over the environment's: %q", out.String())
	}
	out.Reset()
	if err := runEncrypt("encrypt", []string{"--input", ""}, &out); err != nil || !strings.HasPrefix(out.String(), "Encrypted text: ") {
		t.Errorf("encrypt of an empty text: %q, %v", out.String(), err)
	}
	out.Reset()
	if err := runEncrypt("encrypt", []string{"--help"}, &out); err != nil || !strings.Contains(out.String(), "ACTIVEMQ_ENCRYPTION_PASSWORD") {
		t.Errorf("encrypt --help: %v, does not name ACTIVEMQ_ENCRYPTION_PASSWORD:\n%s", err, out.String())
	}
	for _, tc := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"no input", []string{"--password", "p"}, "", "encrypt: --input and --password (or ACTIVEMQ_ENCRYPTION_PASSWORD) are mandatory"},
		{"no password", []string{"--input", "x"}, "", "encrypt: --input and --password (or ACTIVEMQ_ENCRYPTION_PASSWORD) are mandatory"},
		{"other algorithm", []string{"--password", "p", "--input", "x", "--algorithm", "PBEWITHHMACSHA512ANDAES_256"}, "",
			`encrypt: --algorithm "PBEWITHHMACSHA512ANDAES_256": only PBEWithMD5AndDES (ActiveMQ's default) is supported`},
		{"non-ASCII password", []string{"--password", "pässword", "--input", "x"}, "",
			"encrypt: enc: bad password: byte 1 is not printable ASCII (Java's PBEWithMD5AndDES accepts only U+0020 to U+007E)"},
		{"stray argument", []string{"--password", "p", "--input", "two", "words"}, "", `encrypt takes no arguments, got ["words"] (quote a --input with spaces)`},
		{"unknown flag", []string{"--frob"}, "", "encrypt: flag provided but not defined: -frob (wharf encrypt --help lists the flags)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ACTIVEMQ_ENCRYPTION_PASSWORD", tc.env)
			var out bytes.Buffer
			err := runEncrypt("encrypt", tc.args, &out)
			if err == nil || err.Error() != tc.want || out.Len() != 0 {
				t.Fatalf("error %v, stdout %q; want %q and nothing", err, out.String(), tc.want)
			}
		})
	}
}

// TestWharfCommandLineEncryptHelp: --help of encrypt and decrypt prints
// the usage to stdout, nothing to stderr, exit 0; wharf help lists both.
func TestWharfCommandLineEncryptHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"encrypt", "--help"}, "wharf encrypt --password PASSWORD --input TEXT"},
		{[]string{"decrypt", "-h"}, "wharf decrypt --password PASSWORD --input CIPHERTEXT"},
		{[]string{"help"}, "wharf decrypt --password P --input VALUE"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runWharf(t, tc.args...)
			if code != 0 || !strings.Contains(out, tc.want) || errOut != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0, the usage (%q) on stdout, nothing on stderr", code, clip(out), errOut, tc.want)
			}
		})
	}
}

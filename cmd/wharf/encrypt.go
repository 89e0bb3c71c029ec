package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"wharf/security/enc"
)

const encryptUsage = `Usage:
  wharf encrypt --password PASSWORD --input TEXT
  wharf decrypt --password PASSWORD --input CIPHERTEXT

encrypt prints "Encrypted text: X": write ENC(X) in activemq.xml,
credentials.properties or users.properties where ActiveMQ accepts an
encrypted value. decrypt prints "Decrypted text: TEXT". The values are
those of ActiveMQ 5.17's "activemq encrypt" and "activemq decrypt" (Jasypt's
PBEWithMD5AndDES, 1000 iterations, random salt): each tool reads the other's.

Flags:
  --password PASSWORD   the encryption password (printable ASCII); when absent,
                        the ACTIVEMQ_ENCRYPTION_PASSWORD environment variable,
                        as ActiveMQ reads it
  --input TEXT          the text to encrypt, or the value to decrypt (without
                        ENC( and ); ENC(...) is accepted too)
  --algorithm NAME      only PBEWithMD5AndDES, ActiveMQ's default, is supported

An encrypted value only hides a password from a casual reader: DES and MD5
are weak, and the encryption password must reach the broker too. Exit status
1 if the value cannot be decrypted (wrong password or damaged value).
`

// runEncrypt is `wharf encrypt` (decrypt false) and `wharf decrypt`, with
// the flags of ActiveMQ's EncryptCommand and DecryptCommand
// (activemq-console) and the same output line.
func runEncrypt(name string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	password := fs.String("password", "", "encryption password")
	input := fs.String("input", "", "text")
	algorithm := fs.String("algorithm", enc.Algorithm, "algorithm")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, encryptUsage)
			return nil
		}
		return fmt.Errorf("%s: %w (wharf %s --help lists the flags)", name, err, name)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s takes no arguments, got %q (quote a --input with spaces)", name, fs.Args())
	}
	seen := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { seen[f.Name] = true })
	if !seen["password"] {
		*password = os.Getenv("ACTIVEMQ_ENCRYPTION_PASSWORD")
		seen["password"] = *password != ""
	}
	// ActiveMQ: "input and password parameters are mandatory".
	if !seen["password"] || !seen["input"] {
		return fmt.Errorf("%s: --input and --password (or ACTIVEMQ_ENCRYPTION_PASSWORD) are mandatory", name)
	}
	// DEVIATION: ActiveMQ passes --algorithm to Jasypt (any JCE PBE
	// algorithm); Wharf implements the default, which ActiveMQ's
	// configuration loader is the only one to read.
	if !strings.EqualFold(*algorithm, enc.Algorithm) {
		return fmt.Errorf("%s: --algorithm %q: only %s (ActiveMQ's default) is supported", name, *algorithm, enc.Algorithm)
	}
	if name == "encrypt" {
		c, err := enc.Encrypt(*input, *password)
		if err != nil {
			return fmt.Errorf("encrypt: %w", err)
		}
		fmt.Fprintln(stdout, "Encrypted text: "+c)
		return nil
	}
	c := *input
	if inner, ok := enc.Unwrap(c); ok {
		c = inner
	}
	p, err := enc.Decrypt(c, *password)
	if err != nil {
		// DEVIATION: ActiveMQ prints "ERROR: Text cannot be decrypted,
		// check your input and password and try again!" on stdout and
		// exits 0; Wharf says why on stderr and exits 1, for scripts.
		return fmt.Errorf("decrypt: %w", err)
	}
	fmt.Fprintln(stdout, "Decrypted text: "+p)
	return nil
}

package enc

import "errors"

var (
	// ErrCannotDecrypt is returned by Decrypt when the padding check fails:
	// the password is wrong or the value was damaged. PBEWithMD5AndDES has
	// no integrity check, so the two cannot be told apart (ActiveMQ prints
	// "ERROR: Text cannot be decrypted, check your input and password and
	// try again!" for both).
	ErrCannotDecrypt = errors.New("enc: cannot decrypt: wrong password or damaged value")
	// ErrBadEncoding is returned by Decrypt for a value that is not
	// base64, or too short or of the wrong length to be salt || ciphertext.
	ErrBadEncoding = errors.New("enc: not an encrypted value")
	// ErrPassword is returned for an empty password or one with a
	// character outside printable ASCII.
	ErrPassword = errors.New("enc: bad password")
)

// Package torture holds the kill torture of issue 17 (`make torture`, and
// a short form in `make test`): a mixed load of every protocol on one
// wharf process on a KahaDB directory, SIGKILLed at random moments and
// restarted on the same store, with a bank-style checker of what the
// broker confirmed. The test is TestTorture (torture_test.go); the package
// has no code of its own.
package torture

// Package command encodes and decodes the KahaDB journal commands of
// ActiveMQ Classic 5.17: the payload of every USER_RECORD in a db-N.log file.
//
// A payload is
//
//	u8 KahaEntryType | varint32 messageLength | protobuf message
//
// (MessageDatabase.toByteSequence: the type byte, then activemq-protobuf's
// writeFramed). The messages are those of journal-data.proto, tag
// activemq-5.17.2, in the proto2 wire format. The codec is written by hand
// because the .proto is not accepted by protoc (KahaLocalTransactionId has two
// fields numbered 1).
//
// Writing. ActiveMQ's generated parsers do not skip unknown fields (an unknown
// key is ignored and its value is then mis-read as the next key), and they do
// not check required fields (a missing one becomes a NullPointerException
// later, during recovery). Encode therefore writes only fields that
// journal-data.proto declares, always writes every required field, writes the
// optional fields ActiveMQ 5.17 itself always sets (AddMessage.priority and
// prioritySupported), and writes fields in ascending field-number order, as the
// generated writeUnframed methods do. For the commands ActiveMQ writes, Encode
// produces byte-for-byte the record ActiveMQ writes for the same values.
//
// Reading. Decode follows the protobuf rules (unknown fields are skipped by
// wire type, a nested message that appears twice is merged, the last scalar
// wins) and in addition rejects what ActiveMQ could not use: unknown entry
// types, missing required fields, unknown destination types, malformed
// varints, lengths that overrun the record and bytes after the message. It
// never panics and allocates only for strings whose length has already been
// checked against the input. Each message's fields are declared once, in a
// table per message (decode.go: number, wire type, name, whether required,
// where the value goes), and one loop (fields.go) applies these rules to
// every message alike.
//
// Ownership. Decode returns byte slices ([]byte fields) that alias the payload
// passed in; callers that reuse the payload buffer must copy them. Values have
// no internal state and are safe to use from any goroutine once built.
package command

package jolokia

import "fmt"

// jmxError is an error as Jolokia reports it: the status it puts in the
// response, the Java exception class (error_type) and the message.
type jmxError struct {
	status int
	typ    string
	msg    string
}

// Error is the text Jolokia puts in "error": the class, " : ", the message.
func (e *jmxError) Error() string { return e.typ + " : " + e.msg }

func badRequest(format string, a ...any) *jmxError {
	return &jmxError{status: 400, typ: "java.lang.IllegalArgumentException", msg: fmt.Sprintf(format, a...)}
}

func instanceNotFound(format string, a ...any) *jmxError {
	return &jmxError{status: 404, typ: "javax.management.InstanceNotFoundException", msg: fmt.Sprintf(format, a...)}
}

func attributeNotFound(attr string, on objectName) *jmxError {
	return &jmxError{status: 404, typ: "javax.management.AttributeNotFoundException",
		msg: fmt.Sprintf("No such attribute: %s (MBean %s)", attr, on.canonical())}
}

func forbidden(what string) *jmxError {
	return &jmxError{status: 403, typ: "java.lang.SecurityException", msg: what + " is not allowed"}
}

// operationFailed is an exception thrown by the operation itself, which
// JMX wraps in an MBeanException.
func operationFailed(err error) *jmxError {
	return &jmxError{status: 500, typ: "javax.management.MBeanException", msg: err.Error()}
}

func tooLarge(limit int64) *jmxError {
	return &jmxError{status: 413, typ: "java.lang.IllegalArgumentException",
		msg: fmt.Sprintf("request body exceeds the limit of %d bytes", limit)}
}

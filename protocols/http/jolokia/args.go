package jolokia

import (
	"encoding/json"
	"strconv"
)

// stringArg converts an exec argument for a java.lang.String parameter:
// GET gives strings, POST any JSON value (null stays null, which an
// operation here refuses).
func stringArg(a any) (string, error) {
	switch v := a.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	case nil:
		return "", badRequest("a null argument where a string is needed")
	}
	return "", badRequest("argument %v is not a string", a)
}

// boolArg converts an argument or written value for a boolean: a JSON
// boolean, or "true"/"false" as a GET path gives it.
func boolArg(a any) (bool, error) {
	switch v := a.(type) {
	case bool:
		return v, nil
	case string:
		if b, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
			return b, nil
		}
	}
	return false, badRequest("value %v is not a boolean (true or false)", a)
}

// typedArg converts a written value to an attribute's Java type: int64
// for int and long, bool for boolean.
func typedArg(typ string, a any) (any, error) {
	switch typ {
	case "int", "long":
		n, err := intArg(a)
		if err == nil && typ == "int" && int64(int32(n)) != n {
			return nil, badRequest("value %d is out of range for an int", n)
		}
		return n, err
	case "boolean":
		return boolArg(a)
	}
	return nil, badRequest("attributes of type %s cannot be written", typ)
}

// intArg converts an exec argument for an int or long parameter.
func intArg(a any) (int64, error) {
	var s string
	switch v := a.(type) {
	case string:
		s = v
	case json.Number:
		s = v.String()
	default:
		return 0, badRequest("argument %v is not a number", a)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, badRequest("argument %q is not an integer", s)
	}
	return n, nil
}

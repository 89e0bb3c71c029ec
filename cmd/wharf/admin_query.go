package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"wharf/cmd/wharf/internal/jolokiaclient"
)

const queryUsage = `Usage:
  wharf query [-Q<type>=<name> ...] [-xQ<type>=<name> ...] [--objname Q]
              [--xobjname Q] [--view ATTR,ATTR...] [flags]

Print the attributes of the broker's MBeans, as "activemq query" does: each
bean as "Name = value" lines under its ObjectName, beans apart by a blank
line. Names may hold the wildcards * and ?.

  -Q<type>=<name>       add the beans of <type> named <name>: Broker,
                        Queue, Topic, TempQueue, TempTopic or Connection
                        (a client connection by client id), e.g.
                        -QQueue=orders.* -QTopic=prices
  -xQ<type>=<name>      leave those beans out, e.g. -xQTopic=ActiveMQ.Advisory.*
  --objname Q           add the beans whose ObjectName matches the key
                        properties Q, after type=Broker,brokerName=<broker>,
                        e.g. --objname destinationType=Queue,*
  --xobjname Q          leave those out
  --view A,B            print only attributes A and B, e.g.
                        --view QueueSize,EnqueueCount

Without -Q or --objname, every bean of the broker. --json prints an object
of ObjectName to attributes. A -Q or --objname that matches nothing is exit
status 1.
` + adminCommon

// queryShortcuts are the key properties of -Q<type>=<name>, %s the name.
var queryShortcuts = map[string]string{
	"Broker":     "", // the broker's own bean: type=Broker,brokerName=<broker>
	"Queue":      "destinationType=Queue,destinationName=%s",
	"Topic":      "destinationType=Topic,destinationName=%s",
	"TempQueue":  "destinationType=TempQueue,destinationName=%s",
	"TempTopic":  "destinationType=TempTopic,destinationName=%s",
	"Connection": "connector=clientConnectors,connectorName=*,connectionViewType=clientId,connectionName=%s",
}

// runQuery is `wharf query`, after ActiveMQ's QueryCommand.
func runQuery(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	o := addAdminFlags(fs)
	var add, sub []string // key properties after the broker's: "" its own bean, "*" all
	fs.Func("objname", "add beans", func(v string) error { add = append(add, v); return nil })
	fs.Func("xobjname", "remove beans", func(v string) error { sub = append(sub, v); return nil })
	view := fs.String("view", "", "attributes")
	// -QQueue=x is ActiveMQ's form, which the flag package would read as
	// a flag called "QQueue": take those out first.
	var rest []string
	for _, arg := range args {
		list, spec := &add, ""
		switch {
		case strings.HasPrefix(arg, "-Q"):
			spec = arg[2:]
		case strings.HasPrefix(arg, "-xQ"):
			list, spec = &sub, arg[3:]
		default:
			rest = append(rest, arg)
			continue
		}
		typ, name, _ := strings.Cut(spec, "=")
		props, ok := queryShortcuts[typ]
		if !ok {
			return usageError("query: %s: unknown type %q (want Broker, Queue, Topic, TempQueue, TempTopic or Connection)", arg, typ)
		}
		if name == "" {
			name = "*"
		}
		if typ == "Broker" {
			props = "" // the --broker's bean; its name is --broker's
		} else {
			props = fmt.Sprintf(props, jolokiaclient.EncodePart(name, true))
		}
		*list = append(*list, props)
	}
	pos, err := parseAdmin("query", fs, rest, queryUsage, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("query takes no arguments, got %q (a -Q shortcut is written -QQueue=NAME)", pos)
	}
	var attrs []string
	if *view != "" {
		attrs = strings.Split(*view, ",")
	}
	return o.withTimeout(func(ctx context.Context) error {
		a, err := o.connect(ctx)
		if err != nil {
			return err
		}
		named := len(add) > 0
		if !named {
			add = []string{"*"}
		}
		found := map[string]map[string]any{}
		for _, p := range add {
			beans, err := a.c.ReadAll(ctx, a.brokerBean(p), attrs...)
			if err != nil {
				return err
			}
			maps.Copy(found, beans)
		}
		for _, p := range sub {
			names, err := a.c.Search(ctx, a.brokerBean(p))
			if err != nil {
				return err
			}
			for _, n := range names {
				delete(found, n)
			}
		}
		if named && len(found) == 0 {
			return &exitError{code: exitFailed, err: fmt.Errorf("query: no MBean of broker %s matches", a.broker)}
		}
		if o.json {
			return printJSON(stdout, found)
		}
		for i, n := range slices.Sorted(maps.Keys(found)) {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "ObjectName = %s\n", n)
			for _, k := range slices.Sorted(maps.Keys(found[n])) {
				fmt.Fprintf(stdout, "%s = %s\n", k, attrText(found[n][k]))
			}
		}
		return nil
	})
}

// attrText is an attribute value as query prints it: strings and numbers
// as they are, ObjectName lists as the names apart by ", ", the rest JSON.
func attrText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			if m, ok := e.(map[string]any); ok && len(m) == 1 && m["objectName"] != nil {
				parts[i] = fmt.Sprint(m["objectName"])
			} else {
				parts[i] = attrText(e)
			}
		}
		return strings.Join(parts, ", ")
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

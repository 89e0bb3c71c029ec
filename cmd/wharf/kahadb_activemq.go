package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"wharf/storage/kahadb"
)

// runKahaDBActiveMQ is wharf kahadb activemq DIR: the links and the
// <persistenceAdapter> with which ActiveMQ 5.17 opens a Wharf store of
// several shards (storage/kahadb/activemq.go says why links).
func runKahaDBActiveMQ(dir string, stdout, stderr io.Writer) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	plan, err := kahadb.PlanMKahaDB(abs)
	if err != nil {
		return err
	}
	if err := kahadb.LinkMKahaDB(abs, plan); err != nil {
		return err
	}
	for _, c := range plan {
		fmt.Fprintf(stderr, "linked %s -> %s (%d destinations)\n", filepath.Join(abs, c.Link), c.Shard, len(c.Destinations))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Written by wharf kahadb activemq for %s.\n", xmlComment(abs))
	b.WriteString("     In ActiveMQ's <broker>, in place of its <persistenceAdapter>. Each child\n")
	b.WriteString("     below is a link, in the store, to one of Wharf's shard directories; the\n")
	b.WriteString("     last is the catch-all, which also takes the destinations ActiveMQ creates.\n")
	b.WriteString("     Wharf places destinations by a hash of their names: once ActiveMQ has\n")
	b.WriteString("     created some, do not give the store back to a Wharf of several shards. -->\n")
	b.WriteString("<persistenceAdapter>\n")
	fmt.Fprintf(&b, "  <mKahaDB directory=\"%s\">\n", xmlAttr(abs))
	b.WriteString("    <filteredPersistenceAdapters>\n")
	for _, c := range plan {
		var names []string
		for _, d := range c.Destinations {
			names = append(names, d.String())
		}
		fmt.Fprintf(&b, "      <!-- %s: %s -->\n", c.Shard, xmlComment(strings.Join(names, " ")))
		if c.Attr == "" {
			b.WriteString("      <filteredKahaDB>\n")
		} else {
			fmt.Fprintf(&b, "      <filteredKahaDB %s=\"%s\">\n", c.Attr, xmlAttr(c.Value))
		}
		b.WriteString("        <persistenceAdapter><kahaDB/></persistenceAdapter>\n")
		b.WriteString("      </filteredKahaDB>\n")
	}
	b.WriteString("    </filteredPersistenceAdapters>\n")
	b.WriteString("  </mKahaDB>\n")
	b.WriteString("</persistenceAdapter>\n")
	_, err = io.WriteString(stdout, b.String())
	return err
}

// xmlAttr escapes s for a double-quoted attribute value.
func xmlAttr(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s)) //nolint:errcheck // a strings.Builder does not fail
	return b.String()
}

// xmlComment keeps s from ending the comment it is put in.
func xmlComment(s string) string { return strings.ReplaceAll(s, "--", "- -") }

package config

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"wharf/engine/message"
)

// xmlElem is one element of the parsed document, with its position.
type xmlElem struct {
	name      string // local name; namespaces are not significant
	line, col int
	attrs     []xmlAttr
	kids      []*xmlElem
	text      strings.Builder
	textLine  int
	textCol   int
}

type xmlAttr struct {
	name, value string
	line, col   int
}

// xsiNS is the XML Schema instance namespace (xsi:schemaLocation).
const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// WharfNS is the XML namespace of the attributes activemq.xml sets for
// Wharf alone, declared as xmlns:wharf="urn:wharf:config" and written
// wharf:shards="1". ActiveMQ 5.17 starts with such attributes on
// <broker> (its schema lets elements carry attributes of other
// namespaces), so one file can serve both brokers.
const WharfNS = "urn:wharf:config"

// wharfPrefix is the prefix docs/config.md uses for WharfNS; an attribute
// written with it but no xmlns:wharf declaration is reported with a hint.
const wharfPrefix = "wharf"

// maxXMLDepth bounds element nesting; activemq.xml needs fewer than 10.
const maxXMLDepth = 64

// ParseXML reads an activemq.xml document: Spring's <beans> wrapper (or a
// bare <broker>) holding ActiveMQ's <broker> element. name is used in error
// positions. See the package documentation and docs/config.md for what is
// accepted; everything else is reported with its line.
func ParseXML(r io.Reader, name string, vars map[string]string) (*Config, error) {
	return parseXML(r, name, vars, LoadOptions{})
}

func parseXML(r io.Reader, name string, vars map[string]string, o LoadOptions) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("config: reading %s: %w", name, err)
	}
	l := newLoader(name, true, vars)
	l.opts = o
	root, err := buildXMLTree(data)
	if err != nil {
		var se *xml.SyntaxError
		line := 0
		if errors.As(err, &se) {
			line = se.Line
		}
		l.problemAt("", line, 0, "XML syntax error: "+strings.TrimPrefix(err.Error(), "XML syntax error on line "+fmt.Sprint(line)+": "))
		return nil, &Error{Problems: l.problems}
	}
	p := &xmlParser{l: l}
	p.document(root)
	return l.finish()
}

// buildXMLTree decodes the whole document into elements, recording where
// every element and attribute starts.
func buildXMLTree(data []byte) (*xmlElem, error) {
	lines := lineIndex(data)
	pos := func(off int64) (int, int) {
		i := sort.Search(len(lines), func(i int) bool { return lines[i] > int(off) }) - 1
		return i + 1, int(off) - lines[i] + 1
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	var stack []*xmlElem
	var root *xmlElem
	for {
		start := d.InputOffset()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) >= maxXMLDepth {
				line, _ := pos(start)
				return nil, &xml.SyntaxError{Msg: fmt.Sprintf("elements nested deeper than %d", maxXMLDepth), Line: line}
			}
			e := &xmlElem{name: t.Name.Local}
			e.line, e.col = pos(start)
			tag := data[start:d.InputOffset()]
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") || a.Name.Space == xsiNS {
					continue // namespace declarations and schema hints
				}
				xa := xmlAttr{name: a.Name.Local, value: a.Value, line: e.line, col: e.col}
				if a.Name.Space != "" {
					xa.name = a.Name.Space + ":" + a.Name.Local
				}
				if off := attrOffset(tag, a.Name.Local); off >= 0 {
					xa.line, xa.col = pos(start + int64(off))
				}
				e.attrs = append(e.attrs, xa)
			}
			if len(stack) == 0 {
				root = e
			} else {
				parent := stack[len(stack)-1]
				parent.kids = append(parent.kids, e)
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				e := stack[len(stack)-1]
				if e.textLine == 0 && len(bytes.TrimSpace(t)) > 0 {
					lead := len(t) - len(bytes.TrimLeft(t, " \t\r\n"))
					e.textLine, e.textCol = pos(start + int64(lead))
				}
				e.text.Write(t)
			}
		}
	}
	if root == nil {
		return nil, &xml.SyntaxError{Msg: "no root element", Line: 1}
	}
	return root, nil
}

func lineIndex(data []byte) []int {
	lines := []int{0}
	for i, b := range data {
		if b == '\n' {
			lines = append(lines, i+1)
		}
	}
	return lines
}

// attrOffset finds where the attribute named local starts in the raw tag.
func attrOffset(tag []byte, local string) int {
	re := regexp.MustCompile(`[\s:]` + regexp.QuoteMeta(local) + `\s*=`)
	if m := re.FindIndex(tag); m != nil {
		return m[0] + 1
	}
	return -1
}

// xmlParser interprets the element tree into the loader's Config.
type xmlParser struct {
	l         *loader
	brokerSet bool
	// dataSources are the JDBC data source beans by id, for
	// <jdbcPersistenceAdapter dataSource="#id">.
	dataSources map[string]*xmlElem
}

// unsupported reports an element Wharf does not implement.
func (p *xmlParser) unsupported(e *xmlElem, path, why string) {
	msg := "<" + e.name + "> is not supported by Wharf yet"
	if why != "" {
		msg += ": " + why
	}
	p.l.problemAt(path, e.line, e.col, msg)
}

// removed names elements for stores and features ActiveMQ itself dropped.
var removed = map[string]string{
	"levelDB":                      "LevelDB was removed from ActiveMQ in 5.17; use <kahaDB>",
	"replicatedLevelDB":            "LevelDB was removed from ActiveMQ in 5.17; use <kahaDB>",
	"amqPersistenceAdapterFactory": "the AMQ store was removed from ActiveMQ in 5.9; use <kahaDB>",
}

// amqStoreProblem is the error for seed 003's <amqPersistenceAdapter>:
// ActiveMQ removed the AMQ store in 5.9 and 5.17 refuses it, so Wharf
// refuses it too, but says what to write instead: the <kahaDB> element
// its attributes translate to, and which of them have no KahaDB
// equivalent.
func amqStoreProblem(e *xmlElem) string {
	var kaha, dropped []string
	for _, a := range e.attrs {
		switch a.name {
		case "directory", "checkpointInterval", "cleanupInterval", "archiveDataLogs":
			kaha = append(kaha, fmt.Sprintf("%s=%q", a.name, a.value))
		case "maxFileLength":
			kaha = append(kaha, fmt.Sprintf("journalMaxFileLength=%q", a.value))
		case "syncOnWrite":
			// AMQ's syncOnWrite forced a sync per write; KahaDB syncs
			// every persistent write by default ("always"), so false
			// (AMQ's default) gets no attribute: the safer default stays.
			if strings.EqualFold(strings.TrimSpace(a.value), "true") {
				kaha = append(kaha, `journalDiskSyncStrategy="always"`)
			}
		default: // useNIO, persistentIndex, maxCheckpointMessageAddSize, index*, directoryArchive
			dropped = append(dropped, a.name)
		}
	}
	msg := "<amqPersistenceAdapter>: the AMQ message store was removed from ActiveMQ in 5.9 (5.17 refuses it too) and Wharf does not read it; use <kahaDB>, here <kahaDB"
	for _, k := range kaha {
		msg += " " + k
	}
	msg += "/>"
	if len(dropped) > 0 {
		msg += " (" + strings.Join(dropped, ", ") + ": no KahaDB equivalent, dropped)"
	}
	return msg + "; messages still in an AMQ store are not read: drain them with the old broker first"
}

// attrs dispatches e's attributes to handlers; an attribute with no
// handler is reported as unsupported, or as a misspelling when it is one
// edit away from a handled one (prodcerFlowControl).
func (p *xmlParser) attrs(e *xmlElem, path string, handlers map[string]func(val)) {
	for _, a := range e.attrs {
		h, ok := handlers[a.name]
		// Wharf's attributes are shown as docs/config.md writes them.
		name := a.name
		if local, isWharf := strings.CutPrefix(name, WharfNS+":"); isWharf {
			name = wharfPrefix + ":" + local
		}
		if !ok && strings.HasPrefix(a.name, wharfPrefix+":") {
			// encoding/xml leaves an undeclared prefix as the Space; a
			// namespace-aware parser such as ActiveMQ's refuses the file.
			p.l.problemAt(path, a.line, a.col, fmt.Sprintf("<%s %s=%q>: the prefix %s is not declared; add xmlns:%s=%q to <%s> or an enclosing element", e.name, a.name, a.value, wharfPrefix, wharfPrefix, WharfNS, e.name))
			continue
		}
		if !ok && name != a.name && e.name != "broker" {
			p.l.problemAt(path, a.line, a.col, fmt.Sprintf("<%s %s=%q>: Wharf's attributes (wharf:shards, wharf:trustedNetwork, wharf:httpWebSocket) go on <broker>", e.name, name, a.value))
			continue
		}
		if !ok {
			if near := suggest(a.name, slices.Collect(maps.Keys(handlers))); near != "" {
				p.l.problemAt(path, a.line, a.col, fmt.Sprintf("<%s %s=%q>: unknown attribute %s; did you mean %s?", e.name, name, a.value, name, near))
				continue
			}
			p.l.problemAt(path, a.line, a.col, fmt.Sprintf("<%s %s=%q>: attribute %s is not supported by Wharf yet", e.name, name, a.value, name))
			continue
		}
		h(val{raw: a.value, line: a.line, col: a.col, label: fmt.Sprintf("<%s %s=%q>", e.name, name, a.value)})
	}
}

// noText reports character data inside an element that takes none.
func (p *xmlParser) noText(e *xmlElem, path string) {
	if t := strings.TrimSpace(e.text.String()); t != "" {
		p.l.problemAt(path, e.textLine, e.textCol, fmt.Sprintf("<%s>: unexpected text %q", e.name, clip(t)))
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// at binds a handler to a path, so that the val it receives carries it.
func at(path string, set func(val)) func(val) {
	return func(v val) {
		v.path = path
		set(v)
	}
}

func (p *xmlParser) document(root *xmlElem) {
	switch root.name {
	case "beans":
		p.attrs(root, "", nil)
		p.noText(root, "")
		// The placeholder configurers (and the encryptor they use) must
		// be read before any value is resolved, wherever they appear.
		p.beans(root.kids)
		for _, k := range root.kids {
			switch k.name {
			case "bean":
			case "broker":
				p.broker(k)
			case "import":
				p.importElem(k)
			default:
				p.unsupported(k, "", "")
			}
		}
	case "broker":
		p.broker(root)
	default:
		p.l.problemAt("", root.line, root.col, fmt.Sprintf("<%s>: the document must be <beans> or <broker>", root.name))
	}
	if !p.brokerSet {
		p.l.problemAt("", root.line, root.col, "no <broker> element")
	}
}

const (
	placeholderConfigurer  = "org.springframework.beans.factory.config.PropertyPlaceholderConfigurer"
	placeholderConfigurer2 = "org.springframework.context.support.PropertySourcesPlaceholderConfigurer"
)

// bean accepts Spring's placeholder configurer, or Jasypt's encryptable
// one (encryptable), and reads its properties files. Other beans are
// application wiring Wharf cannot run (xml_security.go reads the Jasypt
// encryptor beans).
func (p *xmlParser) bean(e *xmlElem, encryptable bool) {
	p.attrs(e, "", map[string]func(val){"class": func(val) {}, "id": func(val) {}})
	p.noText(e, "")
	var locations []val
	ignoreMissing := false
	for _, k := range e.kids {
		if encryptable && k.name == "constructor-arg" {
			continue // the encryptor, read by encryptableConfigurer
		}
		if k.name != "property" {
			p.unsupported(k, "", "")
			continue
		}
		var name string
		var value *val
		p.attrs(k, "", map[string]func(val){
			"name":  func(v val) { name = v.raw },
			"value": func(v val) { value = &v },
		})
		switch name {
		case "location", "locations":
			if value != nil {
				locations = append(locations, *value)
			}
			for _, v := range propertyValues(p, k) {
				locations = append(locations, v)
			}
		case "ignoreResourceNotFound":
			if value != nil {
				p.l.setBool(&ignoreMissing, *value)
			}
			for _, v := range propertyValues(p, k) {
				p.l.setBool(&ignoreMissing, v)
			}
		default:
			p.l.problemAt("", k.line, k.col, fmt.Sprintf("<property name=%q> of the placeholder configurer is not supported by Wharf yet", name))
		}
	}
	for _, loc := range locations {
		s, ok := p.l.text(loc)
		if !ok {
			continue
		}
		for _, one := range strings.Split(s, ",") {
			if strings.TrimSpace(one) == "" {
				continue
			}
			if err := p.l.readPropertiesFile(one, ignoreMissing); err != nil {
				p.l.problemAt("", loc.line, loc.col, loc.label+": "+err.Error())
			}
		}
	}
}

// propertyValues collects <value> texts under a <property>, directly or in
// a <list>.
func propertyValues(p *xmlParser, e *xmlElem) []val {
	var out []val
	for _, k := range e.kids {
		switch k.name {
		case "value":
			t := strings.TrimSpace(k.text.String())
			line, col := k.textLine, k.textCol
			if line == 0 {
				line, col = k.line, k.col
			}
			out = append(out, val{raw: t, line: line, col: col, label: "<value>" + t + "</value>"})
		case "list":
			out = append(out, propertyValues(p, k)...)
		default:
			p.unsupported(k, "", "")
		}
	}
	return out
}

func (p *xmlParser) broker(e *xmlElem) {
	if p.brokerSet {
		p.l.problemAt("", e.line, e.col, "<broker>: only one broker per file")
		return
	}
	p.brokerSet = true
	l, c := p.l, &p.l.cfg
	var ignoredHook bool
	p.attrs(e, "", map[string]func(val){
		"brokerName":       at("broker_name", func(v val) { l.setString(&c.BrokerName, v) }),
		"dataDirectory":    at("data_directory", func(v val) { l.setString(&c.DataDirectory, v) }),
		"persistent":       at("persistent", func(v val) { l.setBool(&c.Persistent, v) }),
		"useJmx":           at("use_jmx", func(v val) { l.setBool(&c.UseJMX, v) }),
		"advisorySupport":  at("advisory_support", func(v val) { l.setBool(&c.AdvisorySupport, v) }),
		"schedulerSupport": at("scheduler_support", func(v val) { l.setBool(&c.SchedulerSupport, v) }),
		"enableStatistics": at("enable_statistics", func(v val) { l.setBool(&c.EnableStatistics, v) }),
		"schedulerDirectory": at("scheduler_directory", func(v val) {
			l.schedulerDirSet = true
			l.setString(&c.SchedulerDirectory, v)
		}),
		"tmpDataDirectory": at("tmp_data_directory", func(v val) {
			l.tmpDirSet = true
			l.setString(&c.TmpDataDirectory, v)
		}),
		"anonymousProducerAdvisorySupport": at("anonymous_producer_advisory_support", func(v val) {
			l.setBool(&c.AnonymousProducerAdvisorySupport, v)
		}),
		"networkConnectorStartAsync": at("network_connector_start_async", func(v val) {
			l.setBool(&c.NetworkConnectorStartAsync, v)
		}),
		"useVirtualTopics":   at("use_virtual_topics", func(v val) { l.setBool(&c.UseVirtualTopics, v) }),
		"useVirtualDestSubs": at("use_virtual_dest_subs", func(v val) { l.setBool(&c.UseVirtualDestSubs, v) }),
		"useVirtualDestSubsOnCreation": at("use_virtual_dest_subs_on_creation", func(v val) {
			l.setBool(&c.UseVirtualDestSubsOnCreation, v)
		}),
		"offlineDurableSubscriberTimeout":      at("offline_durable_subscriber_timeout", func(v val) { l.setDuration(&c.OfflineDurableSubscriberTimeout, v) }),
		"offlineDurableSubscriberTaskSchedule": at("offline_durable_subscriber_task_schedule", func(v val) { l.setDuration(&c.OfflineDurableSubscriberTaskSchedule, v) }),
		// Wharf always stops cleanly on SIGINT/SIGTERM; the JVM hook
		// setting has nothing to change.
		"useShutdownHook": at("use_shutdown_hook", func(v val) { l.setBool(&ignoredHook, v) }),
		// Wharf's own settings, in its namespace (WharfNS).
		WharfNS + ":shards":         at("shards", func(v val) { l.setInt(&c.Shards, v) }),
		WharfNS + ":trustedNetwork": at("trusted_network", func(v val) { l.setBool(&c.TrustedNetwork, v) }),
		WharfNS + ":httpWebSocket":  at("http.websocket", func(v val) { l.setGroups(&c.HTTP.WebSocket, v) }),
	})
	p.noText(e, "")
	once := map[string]bool{}
	for _, k := range e.kids {
		if once[k.name] {
			p.l.problemAt("", k.line, k.col, fmt.Sprintf("<%s> appears more than once in <broker>", k.name))
			continue
		}
		once[k.name] = true
		switch k.name {
		case "managementContext":
			p.managementContext(k)
		case "persistenceAdapter":
			p.persistenceAdapter(k)
		case "transportConnectors":
			p.transportConnectors(k)
		case "networkConnectors":
			p.networkConnectors(k)
		case "destinationPolicy":
			p.destinationPolicy(k)
		case "systemUsage":
			p.systemUsage(k)
		case "destinationInterceptors":
			p.destinationInterceptors(k)
		case "shutdownHooks":
			p.shutdownHooks(k)
		case "plugins":
			p.plugins(k)
		case "sslContext":
			p.sslContext(k)
		default:
			p.unsupported(k, "", "")
		}
	}
}

// only checks that e holds exactly one child named want (or one of them)
// and returns it.
func (p *xmlParser) only(e *xmlElem, path string, want ...string) *xmlElem {
	p.attrs(e, path, nil)
	p.noText(e, path)
	var got *xmlElem
	for _, k := range e.kids {
		ok := false
		for _, w := range want {
			ok = ok || k.name == w
		}
		switch {
		case !ok:
			if k.name == "amqPersistenceAdapter" {
				p.l.problemAt(path, k.line, k.col, amqStoreProblem(k))
			} else if why, gone := removed[k.name]; gone {
				p.unsupported(k, path, why)
			} else if near := suggest(k.name, want); near != "" {
				p.l.problemAt(path, k.line, k.col, fmt.Sprintf("<%s>: unknown element; did you mean <%s>?", k.name, near))
			} else {
				p.unsupported(k, path, "")
			}
		case got != nil:
			p.l.problemAt(path, k.line, k.col, fmt.Sprintf("<%s> holds more than one <%s>", e.name, strings.Join(want, "> or <")))
		default:
			got = k
		}
	}
	return got
}

func (p *xmlParser) managementContext(e *xmlElem) {
	k := p.only(e, "use_jmx", "managementContext")
	if k == nil {
		return
	}
	p.noText(k, "use_jmx")
	for _, kk := range k.kids {
		p.unsupported(kk, "use_jmx", "")
	}
	p.attrs(k, "use_jmx", map[string]func(val){
		// Wharf has no JMX, so no JMX/RMI connector: its management API
		// is Jolokia over HTTP (protocols/http).
		"createConnector": func(v val) {
			v.path = "use_jmx"
			var b bool
			p.l.setBool(&b, v)
			if b {
				p.l.problemAt(v.path, v.line, v.col, v.label+": a JMX remote connector is not supported by Wharf (it has no JMX; its management API is Jolokia over HTTP, on the web server's /api/jolokia/)")
			}
		},
	})
}

func (p *xmlParser) shutdownHooks(e *xmlElem) {
	p.attrs(e, "", nil)
	p.noText(e, "")
	for _, k := range e.kids {
		class := ""
		for _, a := range k.attrs {
			if a.name == "class" {
				class = a.value
			}
		}
		if k.name != "bean" || class != "org.apache.activemq.hooks.SpringContextHook" {
			p.unsupported(k, "", "only the SpringContextHook bean is accepted here")
			continue
		}
		// Stops the Spring context (Jetty) at shutdown; Wharf has neither,
		// and stops itself cleanly on SIGINT/SIGTERM.
		p.attrs(k, "", map[string]func(val){"class": func(val) {}, "id": func(val) {}})
	}
}

func (p *xmlParser) persistenceAdapter(e *xmlElem) {
	k := p.only(e, "persistence", "kahaDB", "mKahaDB", "wharfLSM", "jdbcPersistenceAdapter", "memoryPersistenceAdapter")
	if k == nil {
		return
	}
	p.noText(k, "persistence")
	l, c := p.l, &p.l.cfg
	switch k.name {
	case "memoryPersistenceAdapter":
		for _, kk := range k.kids {
			p.unsupported(kk, "persistence", "")
		}
		c.Persistence.Kind = KindMemory
		l.note("persistence.memory", k.line, k.col, "<memoryPersistenceAdapter>")
		p.attrs(k, "persistence.memory", nil)
	case "mKahaDB":
		p.mKahaDB(k)
	case "jdbcPersistenceAdapter":
		p.jdbcAdapter(k)
	case "wharfLSM":
		// Wharf's own store: ActiveMQ has no such element.
		for _, kk := range k.kids {
			p.unsupported(kk, "persistence.lsm", "")
		}
		c.Persistence.Kind = KindLSM
		l.note("persistence.lsm", k.line, k.col, "<wharfLSM>")
		s := &c.Persistence.LSM
		const lp = "persistence.lsm."
		p.attrs(k, "persistence.lsm", map[string]func(val){
			"directory": at(lp+"directory", func(v val) {
				l.lsmDirSet = true
				l.setString(&s.Directory, v)
			}),
			"syncWrites":       at(lp+"sync_writes", func(v val) { l.setBool(&s.SyncWrites, v) }),
			"cleanupInterval":  at(lp+"cleanup_interval", func(v val) { l.setDuration(&s.CleanupInterval, v) }),
			"memTableSize":     at(lp+"mem_table_size", func(v val) { l.setSize(&s.MemTableSize, v) }),
			"valueThreshold":   at(lp+"value_threshold", func(v val) { l.setSize(&s.ValueThreshold, v) }),
			"valueLogFileSize": at(lp+"value_log_file_size", func(v val) { l.setSize(&s.ValueLogFileSize, v) }),
			"minFreeDisk":      at(lp+"min_free_disk", func(v val) { l.setSize(&s.MinFreeDisk, v) }),
		})
	default:
		c.Persistence.Kind = KindKahaDB
		l.note("persistence.kahadb", k.line, k.col, "<kahaDB>")
		p.kahaDB(k, "persistence.kahadb", &c.Persistence.KahaDB, &l.sync, func() { l.kahaDirSet = true })
	}
}

// kahaDB reads a <kahaDB>'s attributes and its <locker> into kd; dirSet
// is called when it names a directory.
func (p *xmlParser) kahaDB(k *xmlElem, path string, kd *KahaDB, sync *syncSet, dirSet func()) {
	l := p.l
	kp := path + "."
	for _, kk := range k.kids {
		if kk.name != "locker" {
			p.unsupported(kk, path, "")
			continue
		}
		// <locker><shared-file-locker .../></locker>: the file lock
		// Wharf always takes; only its retry interval is configurable.
		lk := p.only(kk, path, "shared-file-locker")
		if lk == nil {
			continue
		}
		p.noText(lk, path)
		for _, kkk := range lk.kids {
			p.unsupported(kkk, path, "")
		}
		p.attrs(lk, path, map[string]func(val){
			"lockAcquireSleepInterval": at(kp+"lock_acquire_sleep_interval", func(v val) { l.setDuration(&kd.LockAcquireSleepInterval, v) }),
		})
	}
	p.attrs(k, path, map[string]func(val){
		"directory": at(kp+"directory", func(v val) {
			dirSet()
			l.setString(&kd.Directory, v)
		}),
		"journalMaxFileLength":     at(kp+"journal_max_file_length", func(v val) { l.setSize(&kd.JournalMaxFileLength, v) }),
		"journalMaxWriteBatchSize": at(kp+"journal_max_write_batch_size", func(v val) { l.setSize(&kd.JournalMaxWriteBatchSize, v) }),
		"lockKeepAlivePeriod":      at(kp+"lock_keep_alive_period", func(v val) { l.setDuration(&kd.LockKeepAlivePeriod, v) }),
		"enableJournalDiskSyncs":   at(kp+"enable_journal_disk_syncs", func(v val) { l.setSyncFlagOn(kd, sync, v) }),
		"journalDiskSyncStrategy":  at(kp+"journal_disk_sync_strategy", func(v val) { l.setSyncStrategyOn(kd, sync, v) }),
		"journalDiskSyncInterval":  at(kp+"journal_disk_sync_interval", func(v val) { l.setDuration(&kd.JournalDiskSyncInterval, v) }),
		"checkpointInterval":       at(kp+"checkpoint_interval", func(v val) { l.setDuration(&kd.CheckpointInterval, v) }),
		"cleanupInterval":          at(kp+"cleanup_interval", func(v val) { l.setDuration(&kd.CleanupInterval, v) }),
		"indexCacheSize":           at(kp+"index_cache_size", func(v val) { l.setInt(&kd.IndexCacheSize, v) }),
		"indexWriteBatchSize":      at(kp+"index_write_batch_size", func(v val) { l.setInt(&kd.IndexWriteBatchSize, v) }),
		"concurrentStoreAndDispatchQueues": at(kp+"concurrent_store_and_dispatch_queues", func(v val) {
			l.setBool(&kd.ConcurrentStoreAndDispatchQueues, v)
		}),
		"concurrentStoreAndDispatchTopics": at(kp+"concurrent_store_and_dispatch_topics", func(v val) {
			l.setBool(&kd.ConcurrentStoreAndDispatchTopics, v)
		}),
		"archiveDataLogs":             at(kp+"archive_data_logs", func(v val) { l.setBool(&kd.ArchiveDataLogs, v) }),
		"cleanupOnStop":               at(kp+"cleanup_on_stop", func(v val) { l.setBool(&kd.CleanupOnStop, v) }),
		"ignoreMissingJournalfiles":   at(kp+"ignore_missing_journal_files", func(v val) { l.setBool(&kd.IgnoreMissingJournalFiles, v) }),
		"checkForCorruptJournalFiles": at(kp+"check_for_corrupt_journal_files", func(v val) { l.setBool(&kd.CheckForCorruptJournalFiles, v) }),
		"checksumJournalFiles":        at(kp+"checksum_journal_files", func(v val) { l.setBool(&kd.ChecksumJournalFiles, v) }),
		"enableAckCompaction":         at(kp+"enable_ack_compaction", func(v val) { l.setBool(&kd.EnableAckCompaction, v) }),
		"compactAcksAfterNoGC":        at(kp+"compact_acks_after_no_gc", func(v val) { l.setInt(&kd.CompactAcksAfterNoGC, v) }),
		"compactAcksIgnoresStoreGrowth": at(kp+"compact_acks_ignores_store_growth", func(v val) {
			l.setBool(&kd.CompactAcksIgnoresStoreGrowth, v)
		}),
	})
}

// mKahaDB reads <mKahaDB directory><filteredPersistenceAdapters>
// <filteredKahaDB queue|topic|perDestination><persistenceAdapter><kahaDB/>
// </persistenceAdapter></filteredKahaDB>...</filteredPersistenceAdapters>
// </mKahaDB>.
func (p *xmlParser) mKahaDB(k *xmlElem) {
	const mp = "persistence.mkahadb"
	l, c := p.l, &p.l.cfg
	c.Persistence.Kind = KindMKahaDB
	m := &c.Persistence.MKahaDB
	l.note(mp, k.line, k.col, "<mKahaDB>")
	p.attrs(k, mp, map[string]func(val){
		"directory": at(mp+".directory", func(v val) {
			l.mkahaDirSet = true
			l.setString(&m.Directory, v)
		}),
	})
	seen := false
	for _, fpa := range k.kids {
		if fpa.name != "filteredPersistenceAdapters" {
			p.unsupported(fpa, mp, "")
			continue
		}
		if seen {
			l.problemAt(mp, fpa.line, fpa.col, "<filteredPersistenceAdapters> appears more than once in <mKahaDB>")
			continue
		}
		seen = true
		l.mkahaFiltersSet = true
		l.note(mp+".filtered", fpa.line, fpa.col, "<filteredPersistenceAdapters>")
		p.attrs(fpa, mp+".filtered", nil)
		p.noText(fpa, mp+".filtered")
		for _, f := range fpa.kids {
			if f.name != "filteredKahaDB" {
				p.unsupported(f, mp+".filtered", "only <filteredKahaDB> is")
				continue
			}
			i := len(m.Filters)
			m.Filters = append(m.Filters, FilteredKahaDB{KahaDB: defaultKahaDB(), Line: f.line})
			fk := &m.Filters[i]
			path := fmt.Sprintf("%s.filtered[%d]", mp, i)
			l.note(path, f.line, f.col, "<filteredKahaDB>")
			p.attrs(f, path, map[string]func(val){
				"queue":          at(path+".queue", func(v val) { l.setString(&fk.Queue, v) }),
				"topic":          at(path+".topic", func(v val) { l.setString(&fk.Topic, v) }),
				"perDestination": at(path+".per_destination", func(v val) { l.setBool(&fk.PerDestination, v) }),
			})
			p.noText(f, path)
			// Without a nested adapter the filter gets a <kahaDB> with
			// every default.
			var pa *xmlElem
			for _, kk := range f.kids {
				switch {
				case kk.name != "persistenceAdapter":
					p.unsupported(kk, path, "")
				case pa != nil:
					l.problemAt(path, kk.line, kk.col, "<filteredKahaDB> holds more than one <persistenceAdapter>")
				default:
					pa = kk
				}
			}
			if pa == nil {
				continue
			}
			kd := p.only(pa, path, "kahaDB")
			if kd == nil {
				continue
			}
			p.noText(kd, path+".kahadb")
			l.note(path+".kahadb", kd.line, kd.col, "<kahaDB>")
			p.kahaDB(kd, path+".kahadb", &fk.KahaDB, &syncSet{}, func() {})
		}
	}
}

func (p *xmlParser) transportConnectors(e *xmlElem) {
	p.attrs(e, "transport_connectors", nil)
	p.noText(e, "transport_connectors")
	l, c := p.l, &p.l.cfg
	for _, k := range e.kids {
		if k.name != "transportConnector" {
			p.unsupported(k, "transport_connectors", "")
			continue
		}
		i := len(c.Transports)
		c.Transports = append(c.Transports, Transport{Line: k.line})
		t := &c.Transports[i]
		path := fmt.Sprintf("transport_connectors[%d]", i)
		l.note(path, k.line, k.col, "<transportConnector>")
		p.noText(k, path)
		for _, kk := range k.kids {
			p.unsupported(kk, path, "")
		}
		p.attrs(k, path, map[string]func(val){
			"name":                 at(path+".name", func(v val) { l.setString(&t.Name, v) }),
			"uri":                  at(path+".uri", func(v val) { l.setString(&t.URI, v) }),
			"updateClusterClients": at(path+".update_cluster_clients", func(v val) { l.setBool(&t.ClusterClients.Update, v) }),
			"rebalanceClusterClients": at(path+".rebalance_cluster_clients", func(v val) {
				l.setBool(&t.ClusterClients.Rebalance, v)
			}),
			"updateClusterClientsOnRemove": at(path+".update_cluster_clients_on_remove", func(v val) {
				l.setBool(&t.ClusterClients.UpdateOnRemove, v)
			}),
			"updateClusterFilter": at(path+".update_cluster_filter", func(v val) { l.setString(&t.ClusterClients.Filter, v) }),
			"discoveryUri":        at(path+".discovery_uri", func(v val) { l.setString(&t.DiscoveryURI, v) }),
			"auditNetworkProducers": at(path+".audit_network_producers", func(v val) {
				l.setBool(&t.AuditNetworkProducers, v)
			}),
		})
	}
}

func (p *xmlParser) destinationPolicy(e *xmlElem) {
	pm := p.only(e, "destination_policy", "policyMap")
	if pm == nil {
		return
	}
	p.attrs(pm, "destination_policy", nil)
	p.noText(pm, "destination_policy")
	once := map[string]bool{}
	l, c := p.l, &p.l.cfg
	for _, k := range pm.kids {
		if once[k.name] {
			l.problemAt("destination_policy", k.line, k.col, fmt.Sprintf("<%s> appears more than once in <policyMap>", k.name))
			continue
		}
		once[k.name] = true
		switch k.name {
		case "policyEntries":
			p.attrs(k, "destination_policy", nil)
			p.noText(k, "destination_policy")
			for _, pe := range k.kids {
				if pe.name != "policyEntry" {
					p.unsupported(pe, "destination_policy", "")
					continue
				}
				entry := DefaultPolicyEntry()
				entry.Line = pe.line
				path := fmt.Sprintf("destination_policy[%d]", len(c.Policies))
				p.policyEntry(pe, path, &entry)
				c.Policies = append(c.Policies, entry)
			}
		case "defaultEntry":
			pe := p.only(k, "default_policy", "policyEntry")
			if pe == nil {
				continue
			}
			entry := DefaultPolicyEntry()
			entry.Line = pe.line
			p.policyEntry(pe, "default_policy", &entry)
			c.DefaultPolicy = &entry
		default:
			p.unsupported(k, "destination_policy", "")
		}
	}
}

func (p *xmlParser) policyEntry(e *xmlElem, path string, pe *PolicyEntry) {
	l := p.l
	l.note(path, e.line, e.col, "<policyEntry>")
	f := func(key string, set func(val)) func(val) { return at(path+"."+key, set) }
	p.attrs(e, path, map[string]func(val){
		"queue":                          f("queue", func(v val) { l.setString(&pe.Queue, v) }),
		"topic":                          f("topic", func(v val) { l.setString(&pe.Topic, v) }),
		"producerFlowControl":            f("producer_flow_control", func(v val) { l.setBool(&pe.ProducerFlowControl, v) }),
		"memoryLimit":                    f("memory_limit", func(v val) { l.setSize(&pe.MemoryLimit, v) }),
		"expireMessagesPeriod":           f("expire_messages_period", func(v val) { l.setDuration(&pe.ExpireMessagesPeriod, v) }),
		"maxExpirePageSize":              f("max_expire_page_size", func(v val) { l.setInt(&pe.MaxExpirePageSize, v) }),
		"queuePrefetch":                  f("queue_prefetch", func(v val) { l.setInt(&pe.QueuePrefetch, v) }),
		"topicPrefetch":                  f("topic_prefetch", func(v val) { l.setInt(&pe.TopicPrefetch, v) }),
		"durableTopicPrefetch":           f("durable_topic_prefetch", func(v val) { l.setInt(&pe.DurableTopicPrefetch, v) }),
		"queueBrowserPrefetch":           f("queue_browser_prefetch", func(v val) { l.setInt(&pe.QueueBrowserPrefetch, v) }),
		"cursorMemoryHighWaterMark":      f("cursor_memory_high_water_mark", func(v val) { l.setInt(&pe.CursorMemoryHighWaterMark, v) }),
		"storeUsageHighWaterMark":        f("store_usage_high_water_mark", func(v val) { l.setInt(&pe.StoreUsageHighWaterMark, v) }),
		"blockedProducerWarningInterval": f("blocked_producer_warning_interval", func(v val) { l.setDuration(&pe.BlockedProducerWarningInterval, v) }),
		"sendAdvisoryIfNoConsumers":      f("send_advisory_if_no_consumers", func(v val) { l.setBool(&pe.SendAdvisoryIfNoConsumers, v) }),
		"useConsumerPriority":            f("use_consumer_priority", func(v val) { l.setBool(&pe.UseConsumerPriority, v) }),
		"allConsumersExclusiveByDefault": f("all_consumers_exclusive_by_default", func(v val) { l.setBool(&pe.AllConsumersExclusiveByDefault, v) }),
		"prioritizedMessages":            f("prioritized_messages", func(v val) { l.setBool(&pe.PrioritizedMessages, v) }),
		"maxPageSize":                    f("max_page_size", func(v val) { l.setInt(&pe.MaxPageSize, v) }),
		"advisoryForConsumed":            f("advisory_for_consumed", func(v val) { l.setBool(&pe.AdvisoryForConsumed, v) }),
		"advisoryForDelivery":            f("advisory_for_delivery", func(v val) { l.setBool(&pe.AdvisoryForDelivery, v) }),
		"advisoryWhenFull":               f("advisory_when_full", func(v val) { l.setBool(&pe.AdvisoryWhenFull, v) }),
		"advisoryForSlowConsumers":       f("advisory_for_slow_consumers", func(v val) { l.setBool(&pe.AdvisoryForSlowConsumers, v) }),
		"advisoryForFastProducers":       f("advisory_for_fast_producers", func(v val) { l.setBool(&pe.AdvisoryForFastProducers, v) }),
		"advisoryForDiscardingMessages":  f("advisory_for_discarding_messages", func(v val) { l.setBool(&pe.AdvisoryForDiscardingMessages, v) }),
		"gcInactiveDestinations":         f("gc_inactive_destinations", func(v val) { l.setBool(&pe.GCInactiveDestinations, v) }),
		// ActiveMQ's documentation spells it this way; PolicyEntry has
		// both setters.
		"inactiveTimoutBeforeGC":     f("inactive_timeout_before_gc", func(v val) { l.setDuration(&pe.InactiveTimeoutBeforeGC, v) }),
		"inactiveTimeoutBeforeGC":    f("inactive_timeout_before_gc", func(v val) { l.setDuration(&pe.InactiveTimeoutBeforeGC, v) }),
		"persistJMSRedelivered":      f("persist_jms_redelivered", func(v val) { l.setBool(&pe.PersistJMSRedelivered, v) }),
		"messageGroupMapFactoryType": f("message_group_map_factory_type", func(v val) { l.setString(&pe.MessageGroupMapFactoryType, v) }),
		"enableAudit":                f("enable_audit", func(v val) { l.setBool(&pe.EnableAudit, v) }),
		"maxAuditDepth":              f("max_audit_depth", func(v val) { l.setInt(&pe.MaxAuditDepth, v) }),
		"maxProducersToAudit":        f("max_producers_to_audit", func(v val) { l.setInt(&pe.MaxProducersToAudit, v) }),
	})
	p.noText(e, path)
	once := map[string]bool{}
	for _, k := range e.kids {
		if once[k.name] {
			l.problemAt(path, k.line, k.col, fmt.Sprintf("<%s> appears more than once in <policyEntry>", k.name))
			continue
		}
		once[k.name] = true
		switch k.name {
		case "deadLetterStrategy":
			s := p.only(k, path+".dead_letter_strategy", "individualDeadLetterStrategy", "sharedDeadLetterStrategy", "discardingDeadLetterStrategy")
			if s != nil {
				pe.DeadLetter = p.deadLetter(s, path+".dead_letter_strategy")
			}
		case "pendingMessageLimitStrategy":
			s := p.only(k, path+".pending_message_limit", "constantPendingMessageLimitStrategy")
			if s == nil {
				continue
			}
			p.noText(s, path+".pending_message_limit")
			for _, kk := range s.kids {
				p.unsupported(kk, path, "")
			}
			l.note(path+".pending_message_limit", s.line, s.col, "<constantPendingMessageLimitStrategy>")
			p.attrs(s, path+".pending_message_limit", map[string]func(val){
				"limit": f("pending_message_limit", func(v val) { l.setInt(&pe.PendingMessageLimit, v) }),
			})
		case "pendingQueuePolicy":
			// Wharf keeps a queue's pending messages in memory, which is
			// what <vmQueueCursor/> asks for; the store and file cursors
			// would need the temp store, which Wharf does not have yet.
			c := p.only(k, path+".pending_queue_policy", "vmQueueCursor")
			if c == nil {
				continue
			}
			p.noText(c, path+".pending_queue_policy")
			p.attrs(c, path+".pending_queue_policy", nil)
			for _, kk := range c.kids {
				p.unsupported(kk, path, "")
			}
			pe.PendingQueuePolicy = "vm"
		case "networkBridgeFilterFactory":
			// Only the conditional factory: the default filter is what
			// every bridge applies anyway.
			bp := path + ".network_bridge_filter"
			c := p.only(k, bp, "conditionalNetworkBridgeFilterFactory")
			if c == nil {
				continue
			}
			p.noText(c, bp)
			for _, kk := range c.kids {
				p.unsupported(kk, bp, "")
			}
			p.attrs(c, bp, map[string]func(val){
				"replayWhenNoConsumers": f("replay_when_no_consumers", func(v val) { l.setBool(&pe.ReplayWhenNoConsumers, v) }),
				"replayDelay":           f("replay_delay", func(v val) { l.setDuration(&pe.ReplayDelay, v) }),
			})
		default:
			p.unsupported(k, path, "")
		}
	}
}

func (p *xmlParser) deadLetter(e *xmlElem, path string) *DeadLetterStrategy {
	l := p.l
	kind := map[string]string{
		"individualDeadLetterStrategy": DLQIndividual,
		"sharedDeadLetterStrategy":     DLQShared,
		"discardingDeadLetterStrategy": DLQDiscarding,
	}[e.name]
	d := DefaultDeadLetterStrategy(kind)
	l.note(path, e.line, e.col, "<"+e.name+">")
	f := func(key string, set func(val)) func(val) { return at(path+"."+key, set) }
	h := map[string]func(val){
		"processExpired":       f("process_expired", func(v val) { l.setBool(&d.ProcessExpired, v) }),
		"processNonPersistent": f("process_non_persistent", func(v val) { l.setBool(&d.ProcessNonPersistent, v) }),
		"expiration":           f("expiration", func(v val) { l.setDuration(&d.Expiration, v) }),
		"enableAudit":          f("enable_audit", func(v val) { l.setBool(&d.EnableAudit, v) }),
	}
	if kind == DLQIndividual {
		h["queuePrefix"] = f("queue_prefix", func(v val) { l.setString(&d.QueuePrefix, v) })
		h["topicPrefix"] = f("topic_prefix", func(v val) { l.setString(&d.TopicPrefix, v) })
		h["queueSuffix"] = f("queue_suffix", func(v val) { l.setString(&d.QueueSuffix, v) })
		h["topicSuffix"] = f("topic_suffix", func(v val) { l.setString(&d.TopicSuffix, v) })
		h["useQueueForQueueMessages"] = f("use_queue_for_queue_messages", func(v val) { l.setBool(&d.UseQueueForQueueMessages, v) })
		h["useQueueForTopicMessages"] = f("use_queue_for_topic_messages", func(v val) { l.setBool(&d.UseQueueForTopicMessages, v) })
		h["destinationPerDurableSubscriber"] = f("destination_per_durable_subscriber", func(v val) { l.setBool(&d.DestinationPerDurableSubscriber, v) })
	}
	p.attrs(e, path, h)
	p.noText(e, path)
	for _, k := range e.kids {
		if kind != DLQShared || k.name != "deadLetterQueue" {
			p.unsupported(k, path, "")
			continue
		}
		// <deadLetterQueue><queue physicalName="..."/></deadLetterQueue>
		q := p.only(k, path+".dead_letter_queue", "queue")
		if q == nil {
			continue
		}
		p.noText(q, path)
		for _, kk := range q.kids {
			p.unsupported(kk, path, "")
		}
		p.attrs(q, path, map[string]func(val){
			"physicalName": f("dead_letter_queue", func(v val) { l.setString(&d.DeadLetterQueue, v) }),
		})
	}
	return &d
}

func (p *xmlParser) systemUsage(e *xmlElem) {
	su := p.only(e, "system_usage", "systemUsage")
	if su == nil {
		return
	}
	l, u := p.l, &p.l.cfg.SystemUsage
	const sp = "system_usage."
	l.note("system_usage", su.line, su.col, "<systemUsage>")
	p.attrs(su, "system_usage", map[string]func(val){
		"sendFailIfNoSpace":             at(sp+"send_fail_if_no_space", func(v val) { l.setBool(&u.SendFailIfNoSpace, v) }),
		"sendFailIfNoSpaceAfterTimeout": at(sp+"send_fail_if_no_space_after_timeout", func(v val) { l.setDuration(&u.SendFailIfNoSpaceAfterTimeout, v) }),
	})
	p.noText(su, "system_usage")
	once := map[string]bool{}
	for _, k := range su.kids {
		if once[k.name] {
			l.problemAt("system_usage", k.line, k.col, fmt.Sprintf("<%s> appears more than once in <systemUsage>", k.name))
			continue
		}
		once[k.name] = true
		var inner *xmlElem
		switch k.name {
		case "memoryUsage", "storeUsage", "tempUsage", "jobSchedulerUsage":
			inner = p.only(k, "system_usage", k.name)
		default:
			p.unsupported(k, "system_usage", "")
			continue
		}
		if inner == nil {
			continue
		}
		p.noText(inner, "system_usage")
		for _, kk := range inner.kids {
			p.unsupported(kk, "system_usage", "")
		}
		h := map[string]func(val){}
		switch k.name {
		case "memoryUsage":
			h["limit"] = at(sp+"memory_limit", func(v val) { l.setSize(&u.MemoryLimit, v) })
			h["percentOfJvmHeap"] = at(sp+"memory_percent_of_ram", func(v val) { l.setInt(&u.MemoryPercentOfJVMHeap, v) })
		case "storeUsage":
			h["limit"] = at(sp+"store_limit", func(v val) { l.setSize(&u.StoreLimit, v) })
		case "tempUsage":
			h["limit"] = at(sp+"temp_limit", func(v val) { l.setSize(&u.TempLimit, v) })
		case "jobSchedulerUsage":
			h["limit"] = at(sp+"job_scheduler_limit", func(v val) { l.setSize(&u.JobSchedulerLimit, v) })
		}
		p.attrs(inner, "system_usage", h)
	}
}

// destinationInterceptors reads <destinationInterceptors> holding
// <virtualDestinationInterceptor><virtualDestinations> with <virtualTopic>,
// <compositeQueue> and <compositeTopic> elements. Its presence replaces
// ActiveMQ's default virtual topic.
func (p *xmlParser) destinationInterceptors(e *xmlElem) {
	const ip = "destination_interceptors"
	l, c := p.l, &p.l.cfg
	l.note(ip, e.line, e.col, "<destinationInterceptors>")
	c.InterceptorsConfigured = true
	c.VirtualTopics = nil
	p.attrs(e, ip, nil)
	p.noText(e, ip)
	for _, k := range e.kids {
		if k.name != "virtualDestinationInterceptor" {
			p.unsupported(k, ip, "only <virtualDestinationInterceptor> is")
			continue
		}
		vd := p.only(k, ip, "virtualDestinations")
		if vd == nil {
			continue
		}
		p.attrs(vd, ip, nil)
		p.noText(vd, ip)
		for _, v := range vd.kids {
			switch v.name {
			case "virtualTopic":
				p.virtualTopic(v)
			case "compositeQueue":
				p.composite(v, message.Queue)
			case "compositeTopic":
				p.composite(v, message.Topic)
			default:
				p.unsupported(v, ip, "")
			}
		}
	}
}

func (p *xmlParser) virtualTopic(e *xmlElem) {
	l, c := p.l, &p.l.cfg
	i := len(c.VirtualTopics)
	c.VirtualTopics = append(c.VirtualTopics, DefaultVirtualTopic())
	vt := &c.VirtualTopics[i]
	vt.Line = e.line
	path := fmt.Sprintf("destination_interceptors.virtual_topics[%d]", i)
	l.note(path, e.line, e.col, "<virtualTopic>")
	f := func(key string, set func(val)) func(val) { return at(path+"."+key, set) }
	p.attrs(e, path, map[string]func(val){
		"name":                f("name", func(v val) { l.setString(&vt.Name, v) }),
		"prefix":              f("prefix", func(v val) { l.setString(&vt.Prefix, v) }),
		"postfix":             f("postfix", func(v val) { l.setString(&vt.Postfix, v) }),
		"selectorAware":       f("selector_aware", func(v val) { l.setBool(&vt.SelectorAware, v) }),
		"local":               f("local", func(v val) { l.setBool(&vt.Local, v) }),
		"concurrentSend":      f("concurrent_send", func(v val) { l.setBool(&vt.ConcurrentSend, v) }),
		"transactedSend":      f("transacted_send", func(v val) { l.setBool(&vt.TransactedSend, v) }),
		"dropOnResourceLimit": f("drop_on_resource_limit", func(v val) { l.setBool(&vt.DropOnResourceLimit, v) }),
	})
	p.noText(e, path)
	for _, k := range e.kids {
		p.unsupported(k, path, "")
	}
}

// composite reads <compositeQueue> or <compositeTopic> (kind t).
func (p *xmlParser) composite(e *xmlElem, t message.DestType) {
	l, c := p.l, &p.l.cfg
	i := len(c.Composites)
	c.Composites = append(c.Composites, DefaultComposite(t))
	comp := &c.Composites[i]
	comp.Line = e.line
	path := fmt.Sprintf("destination_interceptors.composites[%d]", i)
	l.note(path, e.line, e.col, "<"+e.name+">")
	f := func(key string, set func(val)) func(val) { return at(path+"."+key, set) }
	var ignoredCopy bool
	p.attrs(e, path, map[string]func(val){
		"name":        f(destKey(t), func(v val) { l.setString(&comp.Destination.Name, v) }),
		"forwardOnly": f("forward_only", func(v val) { l.setBool(&comp.ForwardOnly, v) }),
		// Deprecated in ActiveMQ and ignored (CompositeDestination.
		// setCopyMessage does nothing): forwards are always copies.
		"copyMessage":        f("copy_message", func(v val) { l.setBool(&ignoredCopy, v) }),
		"concurrentSend":     f("concurrent_send", func(v val) { l.setBool(&comp.ConcurrentSend, v) }),
		"sendWhenNotMatched": f("send_when_not_matched", func(v val) { l.setBool(&comp.SendWhenNotMatched, v) }),
	})
	p.noText(e, path)
	for _, k := range e.kids {
		if k.name != "forwardTo" {
			p.unsupported(k, path, "")
			continue
		}
		if comp.ForwardTo != nil {
			l.problemAt(path, k.line, k.col, fmt.Sprintf("<forwardTo> appears more than once in <%s>", e.name))
			continue
		}
		comp.ForwardTo = []Forward{}
		p.attrs(k, path, nil)
		p.noText(k, path)
		for _, t := range k.kids {
			fp := fmt.Sprintf("%s.forward_to[%d]", path, len(comp.ForwardTo))
			var fw Forward
			switch t.name {
			case "queue", "topic":
				typ := message.Queue
				if t.name == "topic" {
					typ = message.Topic
				}
				fw.Destination.Type = typ
				p.attrs(t, fp, map[string]func(val){
					"physicalName": at(fp+"."+t.name, func(v val) { l.setString(&fw.Destination.Name, v) }),
				})
			case "filteredDestination":
				hasSelector := false
				p.attrs(t, fp, map[string]func(val){
					"queue": at(fp+".queue", func(v val) { l.setDest(&fw.Destination, message.Queue, v) }),
					"topic": at(fp+".topic", func(v val) { l.setDest(&fw.Destination, message.Topic, v) }),
					"selector": at(fp+".selector", func(v val) {
						hasSelector = true
						l.setFilter(&fw.Selector, v)
					}),
				})
				if !hasSelector {
					// FilteredDestination.matches is false without a filter.
					l.problemAt(fp, t.line, t.col, "<filteredDestination>: selector is required (ActiveMQ forwards nothing without one); to forward every message use <queue physicalName> or <topic physicalName>")
				}
			default:
				p.unsupported(t, path, "a <forwardTo> target is <queue>, <topic> or <filteredDestination>")
				continue
			}
			l.note(fp, t.line, t.col, "<"+t.name+">")
			p.noText(t, fp)
			for _, kk := range t.kids {
				p.unsupported(kk, fp, "")
			}
			comp.ForwardTo = append(comp.ForwardTo, fw)
		}
	}
}

// destKey is the YAML key naming a destination of kind t.
func destKey(t message.DestType) string {
	if t == message.Topic {
		return "topic"
	}
	return "queue"
}

// syncSet records which of enableJournalDiskSyncs and
// journalDiskSyncStrategy one <kahaDB> has set, to refuse both.
type syncSet struct{ strategy, flag bool }

// setSyncFlag handles enableJournalDiskSyncs, the deprecated boolean form
// of journalDiskSyncStrategy (true = always, false = never), for the
// top-level <kahaDB>.
func (l *loader) setSyncFlag(v val) {
	l.setSyncFlagOn(&l.cfg.Persistence.KahaDB, &l.sync, v)
}

func (l *loader) setSyncStrategy(v val) {
	l.setSyncStrategyOn(&l.cfg.Persistence.KahaDB, &l.sync, v)
}

func (l *loader) setSyncFlagOn(k *KahaDB, set *syncSet, v val) {
	var b bool
	before := len(l.problems)
	l.setBool(&b, v)
	if len(l.problems) > before {
		return
	}
	if set.strategy {
		l.problemAt(v.path, v.line, v.col, v.label+": set either enableJournalDiskSyncs or journalDiskSyncStrategy, not both")
		return
	}
	set.flag = true
	if b {
		k.JournalDiskSyncStrategy = SyncAlways
	} else {
		k.JournalDiskSyncStrategy = SyncNever
	}
}

func (l *loader) setSyncStrategyOn(k *KahaDB, set *syncSet, v val) {
	var s string
	l.setString(&s, v)
	if set.flag {
		l.problemAt(v.path, v.line, v.col, v.label+": set either enableJournalDiskSyncs or journalDiskSyncStrategy, not both")
		return
	}
	set.strategy = true
	// JournalDiskSyncStrategy.valueOf(s.trim().toUpperCase())
	k.JournalDiskSyncStrategy = strings.ToLower(strings.TrimSpace(s))
}

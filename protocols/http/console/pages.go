package console

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/version"
)

func brokerVersion() string { return version.Broker }

// overviewData is index.jsp.
type overviewData struct {
	Name, ID, Version, Uptime, Started                string
	Usage                                             []usageBar
	Queues, Topics, Connections, Consumers, Producers int
	Messages, Enqueued, Dequeued                      int64
	Durables, Jobs                                    int
	ByProtocol                                        []protocolCount
}

type usageBar struct {
	Name        string
	Used, Limit int64
	Percent     int
}

type protocolCount struct {
	Protocol string
	N        int
}

func (h *Handler) overview(_ http.ResponseWriter, _ *http.Request, e *engine.Engine) (*view, error) {
	now := h.o.Now()
	started := h.o.Started()
	u := e.Usage()
	d := overviewData{
		Name: e.BrokerName(), ID: e.BrokerID(), Version: version.Broker,
		Uptime: uptime(now.Sub(started)), Started: started.Format(time.RFC3339),
		Usage: []usageBar{
			{"Memory", u.MemoryUsed, u.MemoryLimit, u.MemoryPercent},
			{"Store", u.StoreUsed, u.StoreLimit, u.StorePercent},
			{"Temp", u.TempUsed, u.TempLimit, u.TempPercent},
		},
		Connections: len(e.Connections()), Producers: len(e.Producers()),
		Durables: len(e.DurableSubsInfo()), Jobs: e.ScheduledJobs(),
	}
	for _, s := range e.AllStats() {
		switch s.Destination.Type {
		case message.Queue:
			d.Queues++
			d.Messages += s.Stats.QueueSize
		case message.Topic:
			d.Topics++
		default:
			continue
		}
		d.Consumers += int(s.Stats.ConsumerCount)
		d.Enqueued += s.Stats.EnqueueCount
		d.Dequeued += s.Stats.DequeueCount
	}
	for p, n := range e.ConnectionsByProtocol() {
		if p == "" {
			p = "other"
		}
		d.ByProtocol = append(d.ByProtocol, protocolCount{p, n})
	}
	slices.SortFunc(d.ByProtocol, func(a, b protocolCount) int { return strings.Compare(a.Protocol, b.Protocol) })
	return &view{Page: "index", Title: "Overview", Nav: "index", Data: d}, nil
}

// uptime prints a duration as "3 days 4 hours", "12 minutes 3 seconds":
// its largest unit and the next one.
func uptime(d time.Duration) string {
	s := int64(d / time.Second)
	units := []struct {
		n    int64
		unit string
	}{{s / 86400, "day"}, {s / 3600 % 24, "hour"}, {s / 60 % 60, "minute"}, {s % 60, "second"}}
	for i, u := range units {
		if u.n == 0 && i < len(units)-1 {
			continue
		}
		out := plural(u.n, u.unit)
		if i+1 < len(units) && units[i+1].n != 0 {
			out += " " + plural(units[i+1].n, units[i+1].unit)
		}
		return out
	}
	return ""
}

func plural(n int64, unit string) string {
	if n != 1 {
		unit += "s"
	}
	return strconv.FormatInt(n, 10) + " " + unit
}

// destRow is one line of queues.jsp or topics.jsp.
type destRow struct {
	Name                               string
	Size, Enqueued, Dequeued, InFlight int64
	Consumers                          int64
	Producers, MemoryPercent           int
	InRate, OutRate                    string
}

// listData is a paginated, sorted, filtered list.
type listData struct {
	Rows        any
	Filter      string
	Sort, Order string
	Pager       pager
	SortURL     map[string]string // column → the link that sorts by it
	Type        string            // "queue" or "topic" for the destination lists
	IsDLQ       bool
	Extra       any
}

// pager is a list's page links.
type pager struct {
	Page, Pages, Total, From, To int
	Prev, Next                   string
}

// paginate cuts n rows into pages of size, from the page the request
// asks for, and builds the links keeping the request's other parameters.
func paginate(r *http.Request, n, size int) (lo, hi int, p pager) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	pages := max(1, (n+size-1)/size)
	page = min(max(page, 1), pages)
	lo, hi = min((page-1)*size, n), min(page*size, n)
	p = pager{Page: page, Pages: pages, Total: n, From: lo + 1, To: hi}
	if n == 0 {
		p.From = 0
	}
	link := func(pg int) string {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(pg))
		return r.URL.Path + "?" + q.Encode()
	}
	if page > 1 {
		p.Prev = link(page - 1)
	}
	if page < pages {
		p.Next = link(page + 1)
	}
	return lo, hi, p
}

// sortLinks builds the header links of a sortable list: a column's link
// sorts by it, the current column's turns the order around.
func sortLinks(r *http.Request, cols []string, cur, order string) map[string]string {
	out := make(map[string]string, len(cols))
	for _, c := range cols {
		q := r.URL.Query()
		q.Del("page")
		q.Set("sort", c)
		o := "asc"
		if c == cur && order == "asc" {
			o = "desc"
		} else if c != cur && c != "name" {
			o = "desc" // numbers: biggest first
		}
		q.Set("order", o)
		out[c] = r.URL.Path + "?" + q.Encode()
	}
	return out
}

var destCols = []string{"name", "size", "consumers", "producers", "enqueued", "dequeued", "memory"}

func (h *Handler) queues(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	d := h.destList(r, e, message.Queue)
	return &view{Page: "queues", Title: "Queues", Nav: "queues", Data: d}, nil
}

func (h *Handler) topics(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	d := h.destList(r, e, message.Topic)
	return &view{Page: "topics", Title: "Topics", Nav: "topics", Data: d}, nil
}

// destList reads every destination's counters in one visit per shard,
// keeps those of type t whose name holds the filter, sorts them and cuts
// out the page asked for: the cost is the sort, not the rendering.
func (h *Handler) destList(r *http.Request, e *engine.Engine, t message.DestType) listData {
	q := r.URL.Query()
	filter := strings.TrimSpace(q.Get("filter"))
	sortBy, order := q.Get("sort"), q.Get("order")
	if !slices.Contains(destCols, sortBy) {
		sortBy = "name"
	}
	if order != "desc" {
		order = "asc"
	}
	all := e.AllStats()
	cur := make(map[message.Destination][2]int64, len(all))
	for _, s := range all {
		cur[s.Destination] = [2]int64{s.Stats.EnqueueCount, s.Stats.DequeueCount}
	}
	prev, secs := h.rates.rates(h.o.Now(), cur)
	lf := strings.ToLower(filter)
	// Sort small rows (a pointer and the key), not the snapshots.
	type sortRow struct {
		s   *engine.DestinationSnapshot
		key int64
	}
	snaps := make([]sortRow, 0, len(all))
	for i := range all {
		s := &all[i]
		if s.Destination.Type != t || lf != "" && !strings.Contains(strings.ToLower(s.Destination.Name), lf) {
			continue
		}
		st := s.Stats
		var k int64
		switch sortBy {
		case "size":
			k = st.QueueSize
		case "consumers":
			k = st.ConsumerCount
		case "producers":
			k = int64(s.Producers)
		case "enqueued":
			k = st.EnqueueCount
		case "dequeued":
			k = st.DequeueCount
		case "memory":
			k = st.MemoryUsage
		}
		snaps = append(snaps, sortRow{s, k})
	}
	slices.SortFunc(snaps, func(a, b sortRow) int {
		c := cmp.Compare(a.key, b.key)
		if c == 0 {
			c = strings.Compare(a.s.Destination.Name, b.s.Destination.Name)
		}
		if order == "desc" {
			c = -c
		}
		return c
	})
	lo, hi, p := paginate(r, len(snaps), h.o.PageSize)
	rows := make([]destRow, 0, hi-lo)
	for _, sr := range snaps[lo:hi] {
		s := sr.s
		st := s.Stats
		row := destRow{
			Name: s.Destination.Name, Size: st.QueueSize, Enqueued: st.EnqueueCount, Dequeued: st.DequeueCount,
			InFlight: st.InFlightCount, Consumers: st.ConsumerCount, Producers: s.Producers, MemoryPercent: st.MemoryPercentUsage,
			InRate: "–", OutRate: "–",
		}
		if was, ok := prev[s.Destination]; ok && secs > 0 {
			row.InRate = rate(st.EnqueueCount-was[0], secs)
			row.OutRate = rate(st.DequeueCount-was[1], secs)
		}
		rows = append(rows, row)
	}
	typ := "queue"
	if t == message.Topic {
		typ = "topic"
	}
	return listData{Rows: rows, Filter: filter, Sort: sortBy, Order: order, Pager: p, SortURL: sortLinks(r, destCols, sortBy, order), Type: typ}
}

func rate(n int64, secs float64) string {
	if n < 0 {
		n = 0
	}
	return strconv.FormatFloat(float64(n)/secs, 'f', 1, 64)
}

// queueParam reads the queue a page or action names (JMSDestination).
func queueParam(v url.Values) (message.Destination, error) {
	name := strings.TrimSpace(v.Get("JMSDestination"))
	if name == "" {
		return message.Destination{}, fmt.Errorf("no queue named: give JMSDestination")
	}
	name = strings.TrimPrefix(name, "queue://")
	return message.QueueDest(name), nil
}

// msgRow is one message of browse.jsp.
type msgRow struct {
	ID, CorrelationID, Type, Timestamp, Expiration, Original, Preview, BodyType string
	Persistent, InFlight                                                        bool
	Priority                                                                    uint8
	Redeliveries                                                                int32
}

type browseData struct {
	Queue   string
	Rows    []msgRow
	Pager   pager
	Replay  bool // the queue holds dead letters: offer to replay them
	Size    int64
	Limited bool
}

// maxBrowse bounds how deep browse.jsp pages into a queue (ActiveMQ's
// browse shows the first 400).
const maxBrowse = 10_000

func (h *Handler) browse(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	d, err := queueParam(r.URL.Query())
	if err != nil {
		return nil, err
	}
	st := e.Stats(d)
	if !st.Exists {
		return nil, notFound("no queue %q", d.Name)
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	size := h.o.PageSize
	want := min(max(page, 1)*size, maxBrowse)
	msgs, err := e.Browse(d, nil, want)
	if err != nil {
		return nil, err
	}
	lo, hi, p := paginate(r, len(msgs), size)
	if len(msgs) == want && int64(want) < st.QueueSize && hi == len(msgs) && want < maxBrowse {
		// More are held than were read: offer the next page.
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(p.Page+1))
		p.Next = r.URL.Path + "?" + q.Encode()
		p.Total = int(st.QueueSize)
		p.Pages = int((st.QueueSize + int64(size) - 1) / int64(size))
	}
	bd := browseData{Queue: d.Name, Pager: p, Size: st.QueueSize, Replay: isDLQ(d.Name), Limited: st.QueueSize > maxBrowse}
	for _, qm := range msgs[lo:hi] {
		m := qm.Msg
		row := msgRow{
			ID: m.ID, CorrelationID: m.CorrelationID, Type: m.Type, Timestamp: msTime(m.Timestamp), Expiration: msTime(m.Expiration),
			Persistent: m.Persistent, InFlight: qm.InFlight, Priority: m.Priority, Redeliveries: qm.Redeliveries,
			Preview: preview(m, 80), BodyType: m.BodyType.String(),
		}
		if !m.OriginalDestination.IsZero() {
			row.Original = m.OriginalDestination.String()
			bd.Replay = true
		}
		bd.Rows = append(bd.Rows, row)
	}
	return &view{Page: "browse", Title: "Browse " + d.Name, Nav: "queues", Data: bd}, nil
}

// isDLQ tells a dead letter queue by ActiveMQ's names for them.
func isDLQ(name string) bool {
	return strings.HasPrefix(name, "ActiveMQ.DLQ") || strings.HasPrefix(name, "DLQ.") || strings.HasSuffix(name, ".DLQ")
}

func msTime(ms int64) string {
	if ms == 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05.000")
}

// preview is the start of a message's body, as text.
func preview(m *message.Message, n int) string {
	s := bodyText(m)
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// bodyText renders a body: text as it is, bytes in hex, a map's and a
// stream's entries, an object's size.
func bodyText(m *message.Message) string {
	switch m.BodyType {
	case message.TextBody:
		return string(m.Body)
	case message.BytesBody:
		const maxHex = 4096
		b := m.Body
		more := ""
		if len(b) > maxHex {
			b, more = b[:maxHex], fmt.Sprintf(" … (%d bytes)", len(m.Body))
		}
		return fmt.Sprintf("% x", b) + more
	case message.MapBody:
		var sb strings.Builder
		for _, p := range m.Map {
			fmt.Fprintf(&sb, "%s = %s\n", p.Name, p.Value.Text())
		}
		return sb.String()
	case message.StreamBody:
		var sb strings.Builder
		for _, v := range m.List {
			sb.WriteString(v.Text())
			sb.WriteByte('\n')
		}
		return sb.String()
	case message.ObjectBody:
		return fmt.Sprintf("(a serialized Java object, %d bytes)", len(m.Body))
	}
	return ""
}

// messageData is message.jsp.
type messageData struct {
	Queue    string
	ID       string
	Headers  [][2]string
	Props    []propRow
	Body     string
	BodyType string
	Original string
	InFlight bool
}

type propRow struct{ Name, Type, Value string }

func (h *Handler) message(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	q := r.URL.Query()
	d, err := queueParam(q)
	if err != nil {
		return nil, err
	}
	id := q.Get("id")
	if id == "" {
		return nil, fmt.Errorf("no message named: give id")
	}
	msgs, err := e.Browse(d, func(m *message.Message, _ int32) bool { return m.ID == id }, 1)
	if err != nil {
		return nil, notFound("%v", err)
	}
	if len(msgs) == 0 {
		return nil, notFound("queue %q holds no message %q (consumed, moved or expired since)", d.Name, id)
	}
	qm := msgs[0]
	m := qm.Msg
	persistence := "non-persistent"
	if m.Persistent {
		persistence = "persistent"
	}
	md := messageData{Queue: d.Name, ID: m.ID, Body: bodyText(m), BodyType: m.BodyType.String(), InFlight: qm.InFlight}
	add := func(k, v string) {
		if v != "" {
			md.Headers = append(md.Headers, [2]string{k, v})
		}
	}
	add("JMSMessageID", m.ID)
	add("JMSDestination", m.Destination.String())
	add("JMSCorrelationID", m.CorrelationID)
	add("JMSType", m.Type)
	add("JMSDeliveryMode", persistence)
	add("JMSPriority", strconv.Itoa(int(m.Priority)))
	add("JMSTimestamp", msTime(m.Timestamp))
	add("JMSExpiration", msTime(m.Expiration))
	if !m.ReplyTo.IsZero() {
		add("JMSReplyTo", m.ReplyTo.String())
	}
	add("JMSXGroupID", m.GroupID)
	add("JMSXUserID", m.UserID)
	add("Redeliveries", strconv.Itoa(int(qm.Redeliveries)))
	if !m.OriginalDestination.IsZero() {
		md.Original = m.OriginalDestination.String()
		add("OriginalDestination", md.Original)
	}
	if qm.InFlight {
		add("State", "dispatched to a consumer, not acknowledged")
	}
	for _, p := range m.Props {
		md.Props = append(md.Props, propRow{p.Name, p.Value.Kind.String(), p.Value.Text()})
	}
	return &view{Page: "message", Title: "Message " + m.ID, Nav: "queues", Data: md}, nil
}

// sendData is send.jsp's form, filled from the query.
type sendData struct {
	Destination, Type string
}

func (h *Handler) sendForm(_ http.ResponseWriter, r *http.Request, _ *engine.Engine) (*view, error) {
	q := r.URL.Query()
	typ := q.Get("JMSDestinationType")
	if typ != "topic" {
		typ = "queue"
	}
	return &view{Page: "send", Title: "Send a message", Nav: "send", Data: sendData{Destination: q.Get("JMSDestination"), Type: typ}}, nil
}

// connRow is one line of connections.jsp.
type connRow struct {
	engine.ConnectionInfo
	Consumers int
}

var connCols = []string{"client", "id", "protocol", "remote", "user"}

func (h *Handler) connections(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	q := r.URL.Query()
	filter := strings.ToLower(strings.TrimSpace(q.Get("filter")))
	sortBy, order := q.Get("sort"), q.Get("order")
	if !slices.Contains(connCols, sortBy) {
		sortBy = "client"
	}
	if order != "desc" {
		order = "asc"
	}
	consumers := map[string]int{}
	for _, c := range e.Consumers() {
		consumers[c.ConnectionID]++
	}
	var rows []connRow
	for _, c := range e.Connections() {
		if filter != "" && !strings.Contains(strings.ToLower(c.ClientID+" "+c.ID+" "+c.Remote+" "+c.User+" "+c.Protocol), filter) {
			continue
		}
		rows = append(rows, connRow{c, consumers[c.ID]})
	}
	field := func(c connRow) string {
		switch sortBy {
		case "id":
			return c.ID
		case "protocol":
			return c.Protocol
		case "remote":
			return c.Remote
		case "user":
			return c.User
		}
		return c.ClientID
	}
	slices.SortFunc(rows, func(a, b connRow) int {
		c := cmp.Or(strings.Compare(field(a), field(b)), strings.Compare(a.ID, b.ID))
		if order == "desc" {
			c = -c
		}
		return c
	})
	lo, hi, p := paginate(r, len(rows), h.o.PageSize)
	d := listData{Rows: rows[lo:hi], Filter: q.Get("filter"), Sort: sortBy, Order: order, Pager: p, SortURL: sortLinks(r, connCols, sortBy, order)}
	return &view{Page: "connections", Title: "Connections", Nav: "connections", Data: d}, nil
}

// subRow is one durable subscription of subscribers.jsp.
type subRow struct {
	ClientID, Name, Topic, Selector string
	Active                          bool
	Pending, Dispatched             int
}

func (h *Handler) subscribers(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	var rows []subRow
	filter := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("filter")))
	for _, s := range e.DurableSubsStats() {
		row := subRow{ClientID: s.Key.ClientID, Name: s.Key.Name, Topic: s.Destination.Name, Selector: s.Selector, Active: s.Active, Pending: s.Pending, Dispatched: s.Dispatched}
		if filter != "" && !strings.Contains(strings.ToLower(row.ClientID+" "+row.Name+" "+row.Topic), filter) {
			continue
		}
		rows = append(rows, row)
	}
	slices.SortFunc(rows, func(a, b subRow) int {
		return cmp.Or(strings.Compare(a.ClientID, b.ClientID), strings.Compare(a.Name, b.Name))
	})
	lo, hi, p := paginate(r, len(rows), h.o.PageSize)
	d := listData{Rows: rows[lo:hi], Filter: r.URL.Query().Get("filter"), Pager: p}
	return &view{Page: "subscribers", Title: "Durable subscriptions", Nav: "subscribers", Data: d}, nil
}

// jobRow is one scheduled job of scheduled.jsp.
type jobRow struct {
	ID, Destination, Next, Start, Cron, Preview string
	Delay, Period                               int64
	Repeat                                      int32
}

func (h *Handler) scheduled(_ http.ResponseWriter, r *http.Request, e *engine.Engine) (*view, error) {
	jobs := e.ScheduledJobList()
	lo, hi, p := paginate(r, len(jobs), h.o.PageSize)
	rows := make([]jobRow, 0, hi-lo)
	for _, j := range jobs[lo:hi] {
		rows = append(rows, jobRow{
			ID: j.ID, Destination: j.Msg.Destination.String(), Next: msTime(j.Next), Start: msTime(j.Start), Cron: j.Cron,
			Preview: preview(j.Msg, 60), Delay: j.Delay, Period: j.Period, Repeat: j.Repeat,
		})
	}
	d := listData{Rows: rows, Pager: p}
	return &view{Page: "scheduled", Title: "Scheduled jobs", Nav: "scheduled", Data: d}, nil
}

package conform

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Summary counts a run's results.
type Summary struct {
	Total int `json:"total"`
	Pass  int `json:"pass"`
	Fail  int `json:"fail"`
	Skip  int `json:"skip"`
	// Deviations counts the passes that showed Wharf's documented
	// deviation rather than ActiveMQ's behaviour.
	Deviations int `json:"deviations"`
}

// Summarize counts results.
func Summarize(rs []Result) Summary {
	s := Summary{Total: len(rs)}
	for _, r := range rs {
		switch r.Status {
		case Pass:
			s.Pass++
			if r.Deviation != "" {
				s.Deviations++
			}
		case Fail:
			s.Fail++
		case Skip:
			s.Skip++
		}
	}
	return s
}

func (s Summary) String() string {
	return fmt.Sprintf("%d cases: %d passed (%d with a documented Wharf deviation), %d failed, %d skipped",
		s.Total, s.Pass, s.Deviations, s.Fail, s.Skip)
}

// Report is a run as --json writes it.
type Report struct {
	Broker  BrokerInfo `json:"broker"`
	Results []Result   `json:"results"`
	Summary Summary    `json:"summary"`
	// Against, Differences: the second broker of a differential run.
	Against     *BrokerInfo  `json:"against,omitempty"`
	Differences []Difference `json:"differences,omitempty"`
}

// BrokerInfo describes a target in a report.
type BrokerInfo struct {
	Endpoints map[string]string `json:"endpoints"`
	Server    string            `json:"server,omitempty"`
	Results   []Result          `json:"results,omitempty"` // the second broker's, in a differential run
}

// Info describes the target for a report.
func (tg *Target) Info() BrokerInfo {
	return BrokerInfo{Endpoints: tg.Endpoints, Server: tg.Server}
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes one line per case and the summary.
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tRESULT\tTIME\tNOTE")
	for _, r := range rs {
		note := r.Reason
		if r.Status == Pass && r.Deviation != "" {
			note = "deviation: " + r.Deviation
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Case, r.Status, r.Duration.Round(time.Millisecond), oneLine(note, 160))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, Summarize(rs))
	return err
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// JUnit XML, the subset CI systems read: one testsuite per protocol, one
// testcase per case, <failure> or <skipped>, the observations in
// <system-out>.
type (
	JUnitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Suites   []JUnitSuite `xml:"testsuite"`
	}
	JUnitSuite struct {
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Cases    []JUnitCase `xml:"testcase"`
	}
	JUnitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *JUnitMessage `xml:"failure,omitempty"`
		Skipped   *JUnitMessage `xml:"skipped,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	JUnitMessage struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes results as JUnit XML.
func WriteJUnit(w io.Writer, name string, rs []Result) error {
	doc := JUnitSuites{Name: name}
	byProto := map[string]*JUnitSuite{}
	var order []string
	for _, r := range rs {
		proto, _, _ := strings.Cut(r.Case, "/")
		s := byProto[proto]
		if s == nil {
			s = &JUnitSuite{Name: "conform/" + proto}
			byProto[proto] = s
			order = append(order, proto)
		}
		jc := JUnitCase{Name: r.Case, Classname: "conform." + proto, Time: secs(r.Duration)}
		var out strings.Builder
		if r.Deviation != "" {
			fmt.Fprintf(&out, "deviation: %s\n", r.Deviation)
		}
		for _, o := range r.Observations {
			fmt.Fprintf(&out, "%s: %s\n", o.Kind, o.Text)
		}
		jc.SystemOut = out.String()
		switch r.Status {
		case Fail:
			jc.Failure = &JUnitMessage{Message: oneLine(r.Reason, 300), Text: r.Reason}
			s.Failures++
			doc.Failures++
		case Skip:
			jc.Skipped = &JUnitMessage{Message: r.Reason}
			s.Skipped++
			doc.Skipped++
		}
		s.Tests++
		doc.Tests++
		s.Cases = append(s.Cases, jc)
	}
	for _, p := range order {
		s := byProto[p]
		var d time.Duration
		for _, r := range rs {
			if strings.HasPrefix(r.Case, p+"/") {
				d += r.Duration
			}
		}
		s.Time = secs(d)
		doc.Suites = append(doc.Suites, *s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// A Difference is a case whose outcome differs between two brokers.
type Difference struct {
	Case string `json:"case"`
	// Expected is true when the case documents a Wharf deviation and the
	// brokers differ only in which of the two behaviours they showed, or
	// the case checks a protocol beyond ActiveMQ (Extension) and one
	// broker skipped it.
	Expected bool `json:"expected"`
	// Kind is "deviation", "extension" or "unexpected".
	Kind string `json:"kind"`
	A    Result `json:"a"`
	B    Result `json:"b"`
}

// Compare returns the cases whose status differs between a and b, or
// where one broker showed Wharf's documented deviation and the other did
// not. Cases run on one side only, or skipped on either for want of an
// endpoint, are not compared.
func Compare(cases []*Case, a, b []Result) []Difference {
	byName := map[string]Result{}
	for _, r := range b {
		byName[r.Case] = r
	}
	var out []Difference
	for _, ra := range a {
		rb, ok := byName[ra.Case]
		if !ok || len(ra.Missing) > 0 || len(rb.Missing) > 0 ||
			ra.Status == rb.Status && (ra.Deviation == "") == (rb.Deviation == "") {
			continue
		}
		d := Difference{Case: ra.Case, A: ra, B: rb}
		i := slices.IndexFunc(cases, func(c *Case) bool { return c.Name == ra.Case })
		switch {
		case i < 0:
		case cases[i].Deviation != "":
			d.Expected = ra.Status == Pass && rb.Status == Pass
			d.Kind = "deviation"
		case cases[i].Extension != "":
			d.Expected = ra.Status != Fail && rb.Status != Fail
			d.Kind = "extension"
		}
		if !d.Expected {
			d.Kind = "unexpected"
		}
		out = append(out, d)
	}
	return out
}

// WriteDifferences writes each difference with both brokers' outcome and
// observations side by side.
func WriteDifferences(w io.Writer, nameA, nameB string, ds []Difference) error {
	if len(ds) == 0 {
		_, err := fmt.Fprintf(w, "no differences between %s and %s\n", nameA, nameB)
		return err
	}
	fmt.Fprintf(w, "%d difference(s) between %s (A) and %s (B):\n", len(ds), nameA, nameB)
	for _, d := range ds {
		kind := map[string]string{"deviation": "documented Wharf deviation", "extension": "beyond ActiveMQ 5.17"}[d.Kind]
		if kind == "" {
			kind = "UNEXPECTED"
		}
		fmt.Fprintf(w, "\n%s (%s)\n", d.Case, kind)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  \tA\tB\n")
		fmt.Fprintf(tw, "  result\t%s\t%s\n", d.A.Status, d.B.Status)
		fmt.Fprintf(tw, "  note\t%s\t%s\n", oneLine(note(d.A), 70), oneLine(note(d.B), 70))
		oa, ob := notable(d.A.Observations), notable(d.B.Observations)
		for i := 0; i < max(len(oa), len(ob)); i++ {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", map[bool]string{true: "seen", false: ""}[i == 0], at(oa, i), at(ob, i))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

func note(r Result) string {
	if r.Deviation != "" {
		return "deviation: " + r.Deviation
	}
	return r.Reason
}

// notable keeps the observations worth comparing: what came back from the
// broker that was not a plain message, and failures; at most 12.
func notable(os []Observation) []string {
	var out []string
	for _, o := range os {
		if o.Kind == "send" || o.Kind == "go-stomp" || o.Kind == "recv" &&
			(strings.HasPrefix(o.Text, "RECEIPT") || strings.HasPrefix(o.Text, "CONNECTED")) {
			continue
		}
		out = append(out, oneLine(o.Kind+": "+o.Text, 70))
		if len(out) == 12 {
			break
		}
	}
	return out
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

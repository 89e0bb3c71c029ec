package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"wharf/cmd/wharf/internal/jolokiaclient"
	"wharf/cmd/wharf/wiring"
	"wharf/engine/config"
)

// adminCommands are the commands that manage a running broker over its
// Jolokia API, and the messaging clients, by name: those whose flags
// parseAdmin parses.
var adminCommands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"dstat":       runDstat,
	"query":       runQuery,
	"browse":      runBrowse,
	"purge":       runPurge,
	"dlq":         runDLQ,
	"connections": runConnections,
	"stop":        runStop,
	"producer": func(args []string, stdout, stderr io.Writer) error {
		return runClient("producer", args, stdout, stderr)
	},
	"consumer": func(args []string, stdout, stderr io.Writer) error {
		return runClient("consumer", args, stdout, stderr)
	},
}

// The exit statuses of the admin commands, which scripts test.
const (
	exitFailed      = 1 // an operation failed, or what was named does not exist
	exitUsage       = 2 // a bad flag or argument
	exitUnreachable = 3 // the broker cannot be reached, or refused the login
)

// exitError is an error that ends wharf with a status other than 1.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exitCode is the status wharf ends with after err.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	var u *jolokiaclient.Unreachable
	if errors.As(err, &u) {
		return exitUnreachable
	}
	return exitFailed
}

func usageError(format string, a ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, a...)}
}

// adminCommon is the part of every admin command's --help about reaching
// the broker and the exit status.
const adminCommon = `
Reaching the broker (over its Jolokia API, /api/jolokia/; docs/http.md):
  --url URL             the broker's web server (default http://127.0.0.1:8161)
  --config FILE         take the web server's address from the broker's own
                        configuration instead of --url: activemq.xml (with
                        its jetty.xml import) or Wharf's YAML. Its HTTPS
                        connector when it has one, trusting exactly the
                        certificate of its keystore; 127.0.0.1 for a
                        connector on every interface. Placeholders come
                        from the environment (${activemq.base} from
                        ACTIVEMQ_BASE, default ".")
  --user NAME           log in as NAME (default: $WHARF_USER)
  --password PASS       the password of --user (default: $WHARF_PASSWORD;
                        visible to ps, prefer the environment)
  --broker NAME         the broker's name (default: the one broker the API
                        shows, found by a search for type=Broker)
  --json                print JSON instead of a table
  --timeout D           give up on the API after D (default 30s); a purge
                        of very many messages may need more, and goes on
                        in the broker when the command gives up (dlq
                        replay bounds each of its calls instead)

Exit status: 0 done; 1 an operation failed or what was named does not
exist; 2 a bad flag or argument; 3 the broker cannot be reached, or refused
the login or the operation (operations need a login with the admin role).
`

// adminOpts are the flags every admin command shares.
type adminOpts struct {
	url, user, password, broker string
	config                      string
	json                        bool
	timeout                     time.Duration

	fs       *flag.FlagSet
	resolved bool
	tls      *tls.Config // from --config: trusts the broker's keystore
}

// defaultAdminURL is --url's default: ActiveMQ's jetty.xml's address.
const defaultAdminURL = "http://127.0.0.1:8161"

func addAdminFlags(fs *flag.FlagSet) *adminOpts {
	o := &adminOpts{fs: fs}
	fs.StringVar(&o.url, "url", defaultAdminURL, "web server URL")
	fs.StringVar(&o.config, "config", "", "the broker's configuration file")
	fs.StringVar(&o.user, "user", os.Getenv("WHARF_USER"), "user")
	fs.StringVar(&o.password, "password", os.Getenv("WHARF_PASSWORD"), "password")
	fs.StringVar(&o.broker, "broker", "", "broker name")
	fs.BoolVar(&o.json, "json", false, "JSON output")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "API timeout")
	return o
}

// helpShown, when not nil, is called with the flags of each command whose
// --help parseAdmin printed: the tests check the help against them.
var helpShown func(name string, fs *flag.FlagSet, help string)

// parseAdmin parses args with fs, flags and arguments in any order (as
// in "wharf browse orders --max 5"), and returns the arguments. --help
// prints help to stdout and returns errHelpShown.
func parseAdmin(name string, fs *flag.FlagSet, args []string, help string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprint(stdout, help)
				if helpShown != nil {
					helpShown(name, fs, help)
				}
				return nil, errHelpShown
			}
			return nil, usageError("%s: %v (wharf %s --help lists the flags)", name, err, name)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// errHelpShown ends a command whose --help was printed: exit status 0.
var errHelpShown = errors.New("help shown")

// admin is a connection to one broker's MBeans.
type admin struct {
	c      *jolokiaclient.Client
	broker string // the brokerName key, encoded
	ctx    context.Context
}

// resolve sets the URL (and TLS trust) from --config when it is given;
// --config and --url together are a usage error.
func (o *adminOpts) resolve() error {
	if o.resolved {
		return nil
	}
	o.resolved = true
	if o.config == "" {
		return nil
	}
	urlSet := false
	o.fs.Visit(func(f *flag.Flag) { urlSet = urlSet || f.Name == "url" })
	if urlSet {
		return usageError("give --url or --config, not both")
	}
	// The admin command opens no listener: connectors on every
	// interface without an authentication plugin are not its concern.
	cfg, err := config.LoadFileWith(o.config, nil, config.LoadOptions{TrustedNetwork: true, Decrypt: wiring.Decrypt})
	if err != nil {
		return usageError("--config: %v", err)
	}
	url, tc, err := wiring.AdminTarget(cfg)
	if err != nil {
		return usageError("--config %s: %v", o.config, err)
	}
	o.url, o.tls = url, tc
	return nil
}

// httpClient is the client of the web server: the default one, or one
// that trusts the keystore --config names.
func (o *adminOpts) httpClient() *http.Client {
	if o.tls == nil {
		return http.DefaultClient
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = o.tls
	return &http.Client{Transport: tr}
}

// connect makes the client of o and finds the broker's name.
func (o *adminOpts) connect(ctx context.Context) (*admin, error) {
	if err := o.resolve(); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(o.url, "http://") && !strings.HasPrefix(o.url, "https://") {
		return nil, usageError("--url %q: want http://host:port or https://host:port", o.url)
	}
	a := &admin{c: &jolokiaclient.Client{Base: o.url, User: o.user, Password: o.password, HTTP: o.httpClient()}, ctx: ctx}
	names, err := a.c.Search(ctx, "org.apache.activemq:type=Broker,brokerName=*")
	if err != nil {
		return nil, err
	}
	var brokers []string
	for _, n := range names {
		on, err := jolokiaclient.ParseName(n)
		if err != nil {
			return nil, err
		}
		brokers = append(brokers, on.Props["brokerName"])
	}
	slices.Sort(brokers)
	if o.broker != "" {
		a.broker = jolokiaclient.EncodePart(o.broker, false)
		if !slices.Contains(brokers, a.broker) {
			shown := strings.Join(brokers, ", ")
			if shown == "" {
				shown = "none"
			}
			return nil, &exitError{code: exitFailed, err: fmt.Errorf("--broker %q: %s shows no such broker (brokers: %s)", o.broker, o.url, shown)}
		}
		return a, nil
	}
	switch len(brokers) {
	case 0:
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%s: the API shows no broker (no org.apache.activemq:type=Broker MBean)", o.url)}
	case 1:
		a.broker = brokers[0]
		return a, nil
	}
	return nil, usageError("%s shows %d brokers (%s): choose one with --broker", o.url, len(brokers), strings.Join(brokers, ", "))
}

// withTimeout runs f with a context bounded by o.timeout.
func (o *adminOpts) withTimeout(f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	return f(ctx)
}

// brokerBean is the name of the broker's own MBean with more properties.
func (a *admin) brokerBean(props string) string {
	n := "org.apache.activemq:type=Broker,brokerName=" + a.broker
	if props != "" {
		n += "," + props
	}
	return n
}

// queueBean is the MBean of the queue called name (or, when pattern, of
// the queues its wildcards match).
func (a *admin) queueBean(name string, pattern bool) string {
	return a.brokerBean("destinationType=Queue,destinationName=" + jolokiaclient.EncodePart(name, pattern))
}

// queues returns the names of the queues name matches (name itself, or
// those its * and ? match), sorted; none is a not-found error.
func (a *admin) queues(name string) ([]string, error) {
	pattern := strings.ContainsAny(name, "*?")
	beans, err := a.c.ReadAll(a.ctx, a.queueBean(name, pattern), "Name")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, attrs := range beans {
		if n, ok := attrs["Name"].(string); ok {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("no queue %q on broker %s", name, a.broker)}
	}
	slices.Sort(out)
	return out, nil
}

// printJSON writes v indented, as every --json output is.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printTable writes header and rows in columns two spaces apart; the
// columns right says are right-aligned (numbers), the others left.
func printTable(w io.Writer, header []string, rows [][]string, right func(col int) bool) {
	width := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, r := range append([][]string{header}, rows...) {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case right(i):
				b.WriteString(pad + c)
			case i == len(r)-1:
				b.WriteString(c)
			default:
				b.WriteString(c + pad)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// integer is a JSON number attribute as an int64 (0 when absent).
func integer(v any) int64 {
	if f, ok := v.(float64); ok {
		return int64(f)
	}
	return 0
}

// progress writes a progress line to stderr, rewritten in place, when
// stderr is a terminal; elsewhere (a pipe, a log) it writes nothing.
type progress struct {
	w     io.Writer
	shown bool
}

func newProgress(stderr io.Writer) *progress {
	f, ok := stderr.(*os.File)
	if !ok {
		return &progress{}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return &progress{}
	}
	return &progress{w: stderr}
}

func (p *progress) update(format string, a ...any) {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "\r\033[K"+format, a...)
	p.shown = true
}

// done ends the progress line.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// isNotFound says whether err is an MBean the server does not have.
func isNotFound(err error) bool { return jolokiaclient.NotFound(err) }

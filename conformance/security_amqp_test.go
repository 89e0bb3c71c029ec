package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/Azure/go-amqp"
)

// secAMQPOutcome renders an AMQP error as its condition and description,
// the way a client sees a refusal; nil is "ok".
func secAMQPOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	var ae *amqp.Error
	var ce *amqp.ConnError
	var le *amqp.LinkError
	var se *amqp.SessionError
	switch {
	case errors.As(err, &ae):
		return string(ae.Condition) + " " + ae.Description
	case errors.As(err, &le) && le.RemoteErr != nil:
		return string(le.RemoteErr.Condition) + " " + le.RemoteErr.Description
	case errors.As(err, &se) && se.RemoteErr != nil:
		return string(se.RemoteErr.Condition) + " " + se.RemoteErr.Description
	case errors.As(err, &ce) && ce.RemoteErr != nil:
		return string(ce.RemoteErr.Condition) + " " + ce.RemoteErr.Description
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error " + err.Error()
}

// secAMQPCells runs the AMQP 1.0 cells (Wharf only: Debian's ActiveMQ has
// no AMQP connector); they are compared by kind with the STOMP cells.
func secAMQPCells(t *testing.T, tg *secTarget, v *secVerifier, m *secMatrix) {
	if tg.amqp == "" {
		t.Log("no AMQP connector: AMQP cells skipped")
		return
	}
	const proto = "amqp"
	d := secDestsFor(v.tag, proto)
	for _, q := range []string{d.orders, d.dlq, d.other, "orders.fanout.copy", "audit.fanout"} {
		v.queue(q)
	}
	v.topic(d.topic)
	for _, u := range secUsers {
		cell := func(op, out string) { m.cell(proto+"/"+u.name+"/"+op, out) }
		// session opens a fresh connection as u; done closes it.
		session := func() (*amqp.Session, func(), string) {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			o := &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()}
			if u.login != "" {
				o.SASLType = amqp.SASLTypePlain(u.login, u.pass)
			}
			c, err := amqp.Dial(ctx, "amqp://"+tg.amqp, o)
			if err != nil {
				return nil, nil, secAMQPOutcome(err)
			}
			s, err := c.NewSession(ctx, nil)
			if err != nil {
				c.Close()
				return nil, nil, secAMQPOutcome(err)
			}
			return s, func() { c.Close() }, "ok"
		}
		send := func(addr, body string) string {
			s, done, out := session()
			if s == nil {
				return "connect: " + out
			}
			defer done()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			snd, err := s.NewSender(ctx, addr, nil)
			if err != nil {
				return secAMQPOutcome(err)
			}
			return secAMQPOutcome(snd.Send(ctx, amqp.NewMessage([]byte(body)), nil))
		}
		// receive attaches a receiver; want "" only attaches.
		receive := func(addr, want string, o *amqp.ReceiverOptions) string {
			s, done, out := session()
			if s == nil {
				return "connect: " + out
			}
			defer done()
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			if o == nil {
				o = &amqp.ReceiverOptions{Credit: 1}
			}
			r, err := s.NewReceiver(ctx, addr, o)
			if err != nil {
				return secAMQPOutcome(err)
			}
			if want == "" {
				return "ok"
			}
			msg, err := r.Receive(ctx, nil)
			if err != nil {
				return "ok then " + secAMQPOutcome(err)
			}
			r.AcceptMessage(ctx, msg)
			// A STOMP text message reaches AMQP as an amqp-value string.
			body := string(msg.GetData())
			if sv, ok := msg.Value.(string); ok {
				body = sv
			}
			return "ok got=" + strconv.FormatBool(body == want)
		}

		_, done, out := session()
		if done != nil {
			done()
		}
		cell("connect", out)
		if out != "ok" {
			continue
		}
		mark := "m-" + proto + "-" + u.name + "-"
		for _, c := range []struct{ op, addr, queue string }{
			{"orders.in", "queue://" + d.orders, d.orders},
			{"DLQ", "queue://" + d.dlq, d.dlq},
			{"other", "queue://" + d.other, d.other},
		} {
			mk := mark + c.op
			cell("send "+c.op, send(c.addr, mk)+" | stored="+strconv.Itoa(v.stored(c.queue, mk)))
		}
		mk := mark + "topic"
		cell("send topic", send("topic://"+d.topic, mk)+" | stored="+strconv.Itoa(v.published(d.topic, mk)))

		mk = mark + "consume"
		if out := v.c.do("SEND", "destination:/queue/"+d.orders, "body:"+mk); out != "ok" {
			t.Fatalf("verifier send: %s", out)
		}
		cell("consume orders.in", receive("queue://"+d.orders, mk, nil)+" | left="+strconv.Itoa(v.stored(d.orders, mk)))
		cell("durable subscribe topic", receive("topic://"+d.topic, "", &amqp.ReceiverOptions{
			Credit: 1, Name: "sub-" + u.name, Durability: amqp.DurabilityUnsettledState, ExpiryPolicy: amqp.ExpiryPolicyNever}))
		for _, prefix := range []string{"orders", "other"} {
			q := prefix + "." + v.tag + "_" + proto + ".new-" + u.name
			out := send("queue://"+q, mark+"create")
			cell("create by send "+prefix, out+" | created="+strconv.FormatBool(v.created(q)))
			q += "-sub"
			out = receive("queue://"+q, "", nil)
			cell("create by subscribe "+prefix, out+" | created="+strconv.FormatBool(v.created(q)))
		}
		cell("temp queue", receive("", "", &amqp.ReceiverOptions{Credit: 1, DynamicAddress: true}))
		cell("advisory subscribe ActiveMQ.Advisory.Queue", receive("topic://ActiveMQ.Advisory.Queue", "", nil))
		mk = mark + "fanout"
		out = send("queue://orders.fanout", mk)
		cell("send composite orders.fanout", fmt.Sprintf("%s | orders.fanout.copy=%d audit.fanout=%d", out,
			v.stored("orders.fanout.copy", mk), v.stored("audit.fanout", mk)))
		cq := "orders." + u.name + "." + d.events
		v.queue(cq)
		mk = mark + "vt"
		cell("send virtual topic events", send("topic://"+d.events, mk)+" | stored="+strconv.Itoa(v.stored(cq, mk)))
	}
}

#!/usr/bin/python3
"""Wharf tried as a new user would, with Apache Qpid Proton's Python binding
(Debian's python3-qpid-proton) and its reactor (Container) API.

Usage: proton_client.py ADDRESS RUN_ID [CASE...]

ADDRESS is the broker's AMQP listener, "host:port" or an amqp:// URL; RUN_ID
keeps destination names and container ids apart from other runs. Each case
runs in its own Container and prints one JSON line on stdout:

    {"client": "proton", "case": "queue", "passed": true,
     "sent": [...], "received": [...], "error": "", "detail": {...}}

The cases: queue (3 messages sent, then received), topic (a receiver
attached before 3 messages are published), durable (a durable subscription
kept across a detach and a reconnect), request-reply (a responder replies
through the anonymous relay to a dynamic receiver's temporary queue).
Every wait is bounded by WAIT seconds; the exit status is 0 when every case
passed, 1 when one failed (the reason on stderr and in its JSON line), 2 on
bad usage. PN_TRACE_FRM=1 in the environment prints every AMQP frame on
stderr.
"""

import json
import sys
import time

from proton import Message
from proton.handlers import MessagingHandler
from proton.reactor import Container, DurableSubscription

# WAIT bounds every wait for the broker, in seconds.
WAIT = 10.0

# CLOSE_WAIT bounds the wait for the broker to answer our close once a case
# is over (passed or failed), in seconds.
CLOSE_WAIT = 2.0

CLIENT = "proton"


def condition(endpoint):
    """The remote error condition of an endpoint as text."""
    c = endpoint.remote_condition
    if c is None:
        return "no condition"
    return "%s: %s" % (c.name, c.description)


class _Timeout:
    def __init__(self, case, what):
        self.case, self.what = case, what

    def on_timer_task(self, event):
        self.case.fail("timed out after %g s waiting for %s" % (WAIT, self.what))


class _Stop:
    def __init__(self, case):
        self.case = case

    def on_timer_task(self, event):
        # The broker did not answer our close in time: give up on it.
        self.case.container.stop()


class Case(MessagingHandler):
    """One scenario: a handler with a bounded wait for each step."""

    name = ""

    def __init__(self, url, run):
        # Deliveries are accepted explicitly, so that the durable case can
        # accept before it detaches.
        super().__init__(prefetch=10, auto_accept=False)
        self.url, self.run = url, run
        self.sent, self.received = [], []
        self.detail = {}
        self.error = ""
        self.done = False
        self.container = None
        self._timer = None
        self._stop_timer = None
        self._conns = []
        self._gone = set()  # connections closed by both sides or dropped

    # -- plumbing ---------------------------------------------------------

    def connect(self, container_id):
        # No reconnect: a dropped connection is a failure to report, not
        # something to hide behind Proton's default back-off.
        self.container.container_id = container_id
        conn = self.container.connect(self.url, reconnect=False)
        self._conns.append(conn)
        return conn

    def expect(self, what):
        """Starts the wait for the next step, ending the previous one."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.container.schedule(WAIT, _Timeout(self, what))

    def fail(self, msg):
        if self.done:
            return
        self.error = msg
        self.finish()

    def check(self, cond, msg):
        if not cond:
            self.fail(msg)
        return cond

    def finish(self):
        if self.done:
            return
        self.done = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for c in self._conns:
            c.close()
        self._stop_timer = self.container.schedule(CLOSE_WAIT, _Stop(self))

    def _maybe_stop(self):
        # Once every connection is closed or gone the reactor has nothing
        # left to do but wait out the cancelled timers: stop it now.
        if self.done and self._stop_timer is not None and all(c in self._gone for c in self._conns):
            self._stop_timer.cancel()
            self._stop_timer = None
            self.container.stop()

    # -- events every case handles alike ----------------------------------

    def on_start(self, event):
        self.container = event.container
        self.begin()

    def begin(self):
        raise NotImplementedError

    def on_transport_error(self, event):
        c = event.transport.condition
        self.fail("transport error: %s" % (("%s: %s" % (c.name, c.description)) if c else "unknown"))

    def on_disconnected(self, event):
        c = event.transport.condition
        self.fail("the connection dropped%s" % ((": %s: %s" % (c.name, c.description)) if c else ""))

    def on_connection_unbound(self, event):
        self._gone.add(event.connection)
        self._maybe_stop()

    def on_connection_error(self, event):
        self.fail("the broker closed the connection: %s" % condition(event.connection))

    def on_connection_closing(self, event):
        self.fail("the broker closed the connection without an error")

    def on_session_error(self, event):
        self.fail("the broker ended the session: %s" % condition(event.session))

    def on_session_closing(self, event):
        self.fail("the broker ended the session without an error")

    def on_link_error(self, event):
        self.fail("the broker closed link %r: %s" % (event.link.name, condition(event.link)))

    def on_link_closing(self, event):
        self.fail("the broker closed link %r without an error" % event.link.name)

    def on_connection_closed(self, event):
        self._gone.add(event.connection)
        self._maybe_stop()

    def on_rejected(self, event):
        self.fail("the broker rejected a message: %s" % event.delivery.remote.condition)

    def on_released(self, event):
        self.fail("the broker released a message on link %r" % event.link.name)

    def result(self):
        return {
            "client": CLIENT, "case": self.name, "passed": self.done and not self.error,
            "sent": self.sent, "received": self.received, "error": self.error,
            "detail": self.detail,
        }


class QueueCase(Case):
    """3 messages to a queue, accepted by the broker, then received in order."""

    name = "queue"

    def begin(self):
        self.addr = "queue://%s.queue" % self.run
        self.conn = self.connect("%s-proton-queue" % self.run)
        self.snd = self.container.create_sender(self.conn, self.addr)
        self.accepted = 0
        self.expect("credit on the sender to %s" % self.addr)

    def on_sendable(self, event):
        if event.sender != self.snd or self.sent:
            return
        for i in range(1, 4):
            body = "%s queue message %d" % (self.run, i)
            event.sender.send(Message(id="%s-q-%d" % (self.run, i), durable=True, body=body))
            self.sent.append(body)
        self.expect("the broker to accept 3 messages")

    def on_accepted(self, event):
        self.accepted += 1
        if self.accepted == len(self.sent):
            self.rcv = self.container.create_receiver(self.conn, self.addr)
            self.expect("3 messages from %s" % self.addr)

    def on_message(self, event):
        self.accept(event.delivery)
        self.received.append(event.message.body)
        if len(self.received) == len(self.sent):
            if self.check(self.received == self.sent, "received %r, want %r" % (self.received, self.sent)):
                self.finish()


class TopicCase(Case):
    """A receiver attached to a topic gets the 3 messages published after."""

    name = "topic"

    def begin(self):
        self.addr = "topic://%s.topic" % self.run
        self.conn = self.connect("%s-proton-topic" % self.run)
        self.rcv = self.container.create_receiver(self.conn, self.addr)
        self.snd = None
        self.expect("the broker to attach the receiver on %s" % self.addr)

    def on_link_opened(self, event):
        if event.link == self.rcv and self.snd is None:
            self.snd = self.container.create_sender(self.conn, self.addr)
            self.expect("credit on the sender to %s" % self.addr)

    def on_sendable(self, event):
        if event.sender != self.snd or self.sent:
            return
        for i in range(1, 4):
            body = "%s topic message %d" % (self.run, i)
            event.sender.send(Message(body=body))
            self.sent.append(body)
        self.expect("3 messages from %s" % self.addr)

    def on_message(self, event):
        self.accept(event.delivery)
        self.received.append(event.message.body)
        if len(self.received) == len(self.sent):
            if self.check(self.received == self.sent, "received %r, want %r" % (self.received, self.sent)):
                self.finish()


class DurableCase(Case):
    """A durable subscription (container id + link name, source durability
    unsettled-state, expiry never) keeps what is published while its link is
    detached and its connection closed, and hands it over on re-attach."""

    name = "durable"
    SUB = "sub1"

    def begin(self):
        self.addr = "topic://%s.durable" % self.run
        self.cid = "%s-proton-durable" % self.run
        self.phase = "attach"
        self.away_accepted = 0
        self.sub_conn = self.connect(self.cid)
        self.rcv = self.container.create_receiver(self.sub_conn, self.addr, name=self.SUB,
                                                  options=DurableSubscription())
        self.snd = None
        self.expect("the broker to attach durable subscription %r" % self.SUB)

    def on_link_opened(self, event):
        if event.link == self.rcv and self.phase == "attach":
            src = event.link.remote_source
            self.detail["remote_source_durability"] = src.durability
            self.detail["remote_source_expiry_policy"] = src.expiry_policy
            self.phase = "before"
            pub = self.connect("%s-proton-publisher" % self.run)
            self.snd = self.container.create_sender(pub, self.addr)
            self.expect("credit on the sender to %s" % self.addr)

    def on_sendable(self, event):
        if event.sender == self.snd and self.phase == "before" and not self.sent:
            body = "%s durable before" % self.run
            self.snd.send(Message(body=body, durable=True))
            self.sent.append(body)
            self.expect("the message published while attached")

    def on_message(self, event):
        self.accept(event.delivery)
        self.received.append(event.message.body)
        if self.phase == "before" and event.link == self.rcv:
            # Accepted first: Proton writes the disposition before the detach.
            self.phase = "detach"
            self.rcv.detach()
            self.expect("the broker's detach of %r" % self.SUB)
        elif self.phase == "reattached" and len(self.received) == len(self.sent):
            if self.check(self.received == self.sent, "received %r, want %r" % (self.received, self.sent)):
                # Closing the link (detach closed=true) ends the subscription.
                self.phase = "unsubscribe"
                self.rcv.close()
                self.expect("the broker's close of %r" % self.SUB)

    def on_link_remote_detach(self, event):
        if event.link == self.rcv and self.phase == "detach":
            self.phase = "offline"
            self.sub_conn.close()
            self.expect("the broker to close the subscriber's connection")

    def on_link_closing(self, event):
        # The broker closed (detach closed=true) a link we did not close.
        if event.link == self.rcv and self.phase == "detach":
            self.fail("the broker answered detach(closed=false) of %r with detach(closed=true) "
                      "(AMQP 1.0 §2.6.5: the reply to a non-closing detach does not close)" % self.SUB)
        else:
            self.fail("the broker closed link %r without an error" % event.link.name)

    def on_connection_closed(self, event):
        if event.connection == self.sub_conn and self.phase == "offline":
            self.phase = "away"
            for i in (1, 2):
                body = "%s durable while away %d" % (self.run, i)
                # durable (JMS persistent): ActiveMQ keeps only persistent
                # messages for a durable subscription that is offline, and
                # an AMQP message without a header is not durable (§3.2.1).
                self.snd.send(Message(body=body, durable=True))
                self.sent.append(body)
            self.expect("the broker to accept the messages published while away")
        super().on_connection_closed(event)

    def on_accepted(self, event):
        if self.phase != "away":
            return
        self.away_accepted += 1
        if self.away_accepted == 2:
            self.phase = "reattached"
            self.sub_conn = self.connect(self.cid)
            self.rcv = self.container.create_receiver(self.sub_conn, self.addr, name=self.SUB,
                                                      options=DurableSubscription())
            self.expect("the 2 messages kept by durable subscription %r" % self.SUB)

    def on_link_closed(self, event):
        if event.link == self.rcv and self.phase == "unsubscribe":
            self.finish()


class RequestReplyCase(Case):
    """A responder on a queue answers each request through the anonymous
    relay to its reply_to, a dynamic receiver's temporary queue."""

    name = "request-reply"

    def begin(self):
        self.addr = "queue://%s.requests" % self.run
        self.ids = {}
        resp = self.connect("%s-proton-responder" % self.run)
        self.req_rcv = self.container.create_receiver(resp, self.addr)
        self.anon = self.container.create_sender(resp, None)
        self.cli = self.connect("%s-proton-requester" % self.run)
        self.dyn = self.container.create_receiver(self.cli, None, dynamic=True)
        self.req_snd = None
        self.opened = set()
        self.expect("the broker to attach the responder's links and the dynamic receiver")

    def on_link_opened(self, event):
        self.opened.add(event.link.name)
        if self.req_snd is not None:
            return
        if not all(l.name in self.opened for l in (self.req_rcv, self.anon, self.dyn)):
            return
        self.reply_to = self.dyn.remote_source.address
        self.detail["reply_to"] = self.reply_to
        if not self.check(self.reply_to, "the broker gave the dynamic receiver no address"):
            return
        self.req_snd = self.container.create_sender(self.cli, self.addr)
        self.expect("credit on the sender to %s" % self.addr)

    def on_sendable(self, event):
        if event.sender != self.req_snd or self.ids:
            return
        for i in range(1, 4):
            body = "%s request %d" % (self.run, i)
            mid = "%s-req-%d" % (self.run, i)
            self.ids["re: " + body] = mid
            event.sender.send(Message(id=mid, reply_to=self.reply_to, body=body))
            self.sent.append("re: " + body)
        self.expect("3 replies on %s" % self.reply_to)

    def on_message(self, event):
        self.accept(event.delivery)
        m = event.message
        if event.link == self.req_rcv:
            if not self.check(m.reply_to, "request %r arrived without reply_to" % m.body):
                return
            self.anon.send(Message(address=m.reply_to, correlation_id=m.id, body="re: " + m.body))
            return
        self.received.append(m.body)
        want = self.ids.get(m.body)
        if not self.check(want is not None, "unexpected reply %r" % m.body):
            return
        if not self.check(m.correlation_id == want,
                          "reply %r has correlation_id %r, want %r" % (m.body, m.correlation_id, want)):
            return
        if len(self.received) == len(self.sent):
            if self.check(self.received == self.sent, "received %r, want %r" % (self.received, self.sent)):
                self.finish()


CASES = [QueueCase, TopicCase, DurableCase, RequestReplyCase]


def main(argv):
    if len(argv) < 3:
        print("usage: %s ADDRESS RUN_ID [CASE...]" % argv[0], file=sys.stderr)
        return 2
    url = argv[1] if "://" in argv[1] else "amqp://" + argv[1]
    run = argv[2]
    names = argv[3:] or [c.name for c in CASES]
    unknown = set(names) - {c.name for c in CASES}
    if unknown:
        print("unknown case(s) %s; known: %s" % (", ".join(sorted(unknown)),
                                                 ", ".join(c.name for c in CASES)), file=sys.stderr)
        return 2
    failed = 0
    for cls in CASES:
        if cls.name not in names:
            continue
        case = cls(url, run)
        start = time.monotonic()
        try:
            Container(case).run()
        except Exception as e:  # a handler raised: report it as the case's failure
            case.done, case.error = True, case.error or "%s: %s" % (type(e).__name__, e)
        if not case.done:
            case.error = case.error or "the reactor stopped before the case finished"
        res = case.result()
        res["ms"] = int((time.monotonic() - start) * 1000)
        print(json.dumps(res), flush=True)
        if not res["passed"]:
            failed += 1
            print("FAIL %s %s: %s" % (CLIENT, case.name, case.error), file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env node
// Wharf tried as a new user would, with the rhea AMQP 1.0 library for
// Node.js (pinned by package-lock.json; `npm ci` installs it).
//
// Usage: node rhea_client.js ADDRESS RUN_ID [CASE...]
//
// ADDRESS is the broker's AMQP listener, "host:port"; RUN_ID keeps
// destination names and container ids apart from other runs. Each case runs
// on its own connections and prints one JSON line on stdout:
//
//   {"client": "rhea", "case": "queue", "passed": true,
//    "sent": [...], "received": [...], "error": "", "detail": {...}}
//
// The cases, the same as proton_client.py's: queue (3 messages sent, then
// received), topic (a receiver attached before 3 messages are published),
// durable (a durable subscription kept across a detach and a reconnect),
// request-reply (a responder replies through the anonymous relay to a
// dynamic receiver's temporary queue). Every wait is bounded by WAIT_MS; the
// exit status is 0 when every case passed, 1 when one failed (the reason on
// stderr and in its JSON line), 2 on bad usage. DEBUG='rhea*' in the
// environment prints every AMQP frame on stderr.
//
// rhea skips SASL unless given a user name, and ActiveMQ 5.17 (so Wharf)
// refuses a connection without SASL by default
// (wireFormat.allowNonSaslConnections=false): it answers the plain AMQP
// header with its SASL header and closes. A user name alone makes rhea use
// SASL ANONYMOUS, which a broker without users accepts.
'use strict';

const rhea = require('rhea');

// WAIT_MS bounds every wait for the broker.
const WAIT_MS = 10000;
// CLOSE_WAIT_MS bounds the wait for the broker to answer our close once a
// case is over (passed or failed).
const CLOSE_WAIT_MS = 2000;

const CLIENT = 'rhea';

function condition(err) {
    if (!err) return 'no condition';
    return `${err.condition || err.name || 'error'}: ${err.description || err.message || ''}`;
}

function sameList(a, b) {
    return a.length === b.length && a.every((v, i) => v === b[i]);
}

// Case is one scenario: connections it owns, and a bounded wait for each
// step. Subclasses implement begin().
class Case {
    constructor(host, port, run) {
        this.host = host;
        this.port = port;
        this.run = run;
        this.sent = [];
        this.received = [];
        this.detail = {};
        this.error = '';
        this.done = false;
        this.ended = false;
        this.conns = [];
        this.timer = null;
        this.closeTimer = null;
        this.container = rhea.create_container({ id: `${run}-rhea-${this.constructor.caseName}` });
        // Without this listener an unhandled link or connection error
        // would be thrown out of the event loop.
        this.container.on('error', (e) => this.fail(`unhandled error: ${e && e.message ? e.message : e}`));
    }

    get name() { return this.constructor.caseName; }

    connect(containerID) {
        // No reconnect: a dropped connection is a failure to report, not
        // something to hide behind rhea's default back-off.
        const c = this.container.connect({
            host: this.host, port: this.port, container_id: containerID, reconnect: false,
            username: 'anonymous',
        });
        this.conns.push(c);
        c.on('connection_error', (ctx) => this.fail(`the broker closed the connection: ${condition(ctx.connection.error)}`));
        c.on('connection_close', () => {
            if (!this.done && !c.closing) this.fail('the broker closed the connection without an error');
            this.maybeEnd();
        });
        c.on('disconnected', (ctx) => {
            if (!this.done && !c.closing) this.fail(`the connection dropped${ctx.error ? ': ' + (ctx.error.message || ctx.error) : ''}`);
            this.maybeEnd();
        });
        c.on('session_error', (ctx) => this.fail(`the broker ended the session: ${condition(ctx.session.error)}`));
        c.on('receiver_error', (ctx) => this.fail(`the broker closed receiver ${ctx.receiver.name}: ${condition(ctx.receiver.error)}`));
        c.on('sender_error', (ctx) => this.fail(`the broker closed sender ${ctx.sender.name}: ${condition(ctx.sender.error)}`));
        c.on('rejected', (ctx) => this.fail(`the broker rejected a message: ${condition(ctx.delivery.remote_state && ctx.delivery.remote_state.error)}`));
        c.on('released', (ctx) => this.fail(`the broker released a message on ${ctx.sender.name}`));
        c.on('modified', (ctx) => this.fail(`the broker answered modified for a message on ${ctx.sender.name}`));
        return c;
    }

    // close closes c on purpose: its close and disconnect are not failures.
    close(c) {
        c.closing = true;
        c.close();
    }

    // expect starts the wait for the next step, ending the previous one.
    expect(what) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.fail(`timed out after ${WAIT_MS / 1000} s waiting for ${what}`), WAIT_MS);
    }

    fail(msg) {
        if (this.done) return;
        this.error = msg;
        this.finish();
    }

    check(cond, msg) {
        if (!cond) this.fail(msg);
        return cond;
    }

    checkBodies() {
        return this.check(sameList(this.received, this.sent),
            `received ${JSON.stringify(this.received)}, want ${JSON.stringify(this.sent)}`);
    }

    finish() {
        if (this.done) return;
        this.done = true;
        clearTimeout(this.timer);
        for (const c of this.conns) {
            if (!c.is_closed()) this.close(c);
        }
        this.closeTimer = setTimeout(() => this.end(), CLOSE_WAIT_MS);
        this.maybeEnd();
    }

    maybeEnd() {
        if (this.done && this.conns.every((c) => c.is_closed())) this.end();
    }

    end() {
        if (this.ended) return;
        this.ended = true;
        clearTimeout(this.timer);
        clearTimeout(this.closeTimer);
        // The broker may not have answered our close: let go of the socket.
        for (const c of this.conns) {
            if (c.socket && typeof c.socket.destroy === 'function') c.socket.destroy();
        }
        this.resolve();
    }

    result() {
        return {
            client: CLIENT, case: this.name, passed: this.done && !this.error,
            sent: this.sent, received: this.received, error: this.error, detail: this.detail,
        };
    }

    start() {
        return new Promise((resolve) => {
            this.resolve = resolve;
            try {
                this.begin();
            } catch (e) {
                this.fail(`${e.name}: ${e.message}`);
            }
        });
    }
}

// QueueCase: 3 messages to a queue, accepted by the broker, then received
// in order.
class QueueCase extends Case {
    static caseName = 'queue';

    begin() {
        const addr = `queue://${this.run}.queue`;
        const conn = this.connect(`${this.run}-rhea-queue`);
        const snd = conn.open_sender(addr);
        let accepted = 0;
        this.expect(`credit on the sender to ${addr}`);
        snd.on('sendable', () => {
            if (this.sent.length) return;
            for (let i = 1; i <= 3; i++) {
                const body = `${this.run} queue message ${i}`;
                snd.send({ message_id: `${this.run}-q-${i}`, durable: true, body });
                this.sent.push(body);
            }
            this.expect('the broker to accept 3 messages');
        });
        snd.on('accepted', () => {
            if (++accepted !== this.sent.length) return;
            const rcv = conn.open_receiver({ source: addr, credit_window: 10 });
            this.expect(`3 messages from ${addr}`);
            rcv.on('message', (ctx) => {
                this.received.push(ctx.message.body);
                if (this.received.length === this.sent.length && this.checkBodies()) this.finish();
            });
        });
    }
}

// TopicCase: a receiver attached to a topic gets the 3 messages published
// after.
class TopicCase extends Case {
    static caseName = 'topic';

    begin() {
        const addr = `topic://${this.run}.topic`;
        const conn = this.connect(`${this.run}-rhea-topic`);
        const rcv = conn.open_receiver({ source: addr, credit_window: 10 });
        this.expect(`the broker to attach the receiver on ${addr}`);
        rcv.on('message', (ctx) => {
            this.received.push(ctx.message.body);
            if (this.received.length === this.sent.length && this.checkBodies()) this.finish();
        });
        rcv.once('receiver_open', () => {
            const snd = conn.open_sender(addr);
            this.expect(`credit on the sender to ${addr}`);
            snd.on('sendable', () => {
                if (this.sent.length) return;
                for (let i = 1; i <= 3; i++) {
                    const body = `${this.run} topic message ${i}`;
                    snd.send({ body });
                    this.sent.push(body);
                }
                this.expect(`3 messages from ${addr}`);
            });
        });
    }
}

// DurableCase: a durable subscription (container id + link name, source
// durability unsettled-state, expiry never) keeps what is published while
// its link is detached and its connection closed, and hands it over on
// re-attach.
class DurableCase extends Case {
    static caseName = 'durable';

    begin() {
        const sub = 'sub1';
        const addr = `topic://${this.run}.durable`;
        const cid = `${this.run}-rhea-durable`;
        const opts = {
            name: sub, autoaccept: false, credit_window: 10,
            source: { address: addr, durable: 2 /* unsettled-state */, expiry_policy: 'never' },
        };
        let phase = 'attach';
        let awayAccepted = 0;
        let snd = null;
        let subConn = this.connect(cid);
        const attach = () => {
            const rcv = subConn.open_receiver(opts);
            rcv.on('message', (ctx) => {
                // Accepted first: rhea writes the disposition before the detach.
                ctx.delivery.accept();
                this.received.push(ctx.message.body);
                if (phase === 'before') {
                    phase = 'detach';
                    rcv.detach();
                    this.expect(`the broker's detach of ${sub}`);
                } else if (phase === 'reattached' && this.received.length === this.sent.length && this.checkBodies()) {
                    // Closing the link (detach closed=true) ends the subscription.
                    phase = 'unsubscribe';
                    rcv.close();
                    this.expect(`the broker's close of ${sub}`);
                }
            });
            rcv.on('receiver_close', (ctx) => {
                const closed = !!(ctx.receiver.remote.detach && ctx.receiver.remote.detach.closed);
                if (phase === 'detach') {
                    if (!this.check(!closed, `the broker answered detach(closed=false) of ${sub} with detach(closed=true) ` +
                        '(AMQP 1.0 §2.6.5: the reply to a non-closing detach does not close)')) return;
                    phase = 'offline';
                    this.close(subConn);
                    this.expect("the broker to close the subscriber's connection");
                } else if (phase === 'unsubscribe') {
                    if (this.check(closed, `the broker answered the close of ${sub} with detach(closed=false)`)) this.finish();
                } else {
                    this.fail(`the broker closed receiver ${sub} without an error`);
                }
            });
            return rcv;
        };
        const first = attach();
        this.expect(`the broker to attach durable subscription ${sub}`);
        first.once('receiver_open', (ctx) => {
            const src = ctx.receiver.source || {};
            this.detail.remote_source_durability = src.durable;
            this.detail.remote_source_expiry_policy = src.expiry_policy;
            phase = 'before';
            const pub = this.connect(`${this.run}-rhea-publisher`);
            snd = pub.open_sender(addr);
            this.expect(`credit on the sender to ${addr}`);
            snd.once('sendable', () => {
                const body = `${this.run} durable before`;
                snd.send({ body, durable: true });
                this.sent.push(body);
                this.expect('the message published while attached');
            });
            snd.on('accepted', () => {
                if (phase !== 'away' || ++awayAccepted !== 2) return;
                phase = 'reattached';
                subConn = this.connect(cid);
                attach();
                this.expect(`the 2 messages kept by durable subscription ${sub}`);
            });
        });
        this.onSubscriberClosed = (c) => {
            if (c !== subConn || phase !== 'offline') return;
            phase = 'away';
            for (let i = 1; i <= 2; i++) {
                const body = `${this.run} durable while away ${i}`;
                // durable (JMS persistent): ActiveMQ keeps only persistent
                // messages for a durable subscription that is offline, and
                // an AMQP message without a header is not durable (§3.2.1).
                snd.send({ body, durable: true });
                this.sent.push(body);
            }
            this.expect('the broker to accept the messages published while away');
        };
        subConn.once('connection_close', () => this.onSubscriberClosed(subConn));
    }
}

// RequestReplyCase: a responder on a queue answers each request through the
// anonymous relay to its reply_to, a dynamic receiver's temporary queue.
class RequestReplyCase extends Case {
    static caseName = 'request-reply';

    begin() {
        const addr = `queue://${this.run}.requests`;
        const ids = new Map(); // reply body → request message_id
        const resp = this.connect(`${this.run}-rhea-responder`);
        const reqRcv = resp.open_receiver({ source: addr, credit_window: 10 });
        const anon = resp.open_sender({ target: {} }); // no address: the anonymous relay
        const pending = [];
        const flush = () => {
            while (pending.length && anon.sendable()) anon.send(pending.shift());
        };
        anon.on('sendable', flush);
        reqRcv.on('message', (ctx) => {
            const m = ctx.message;
            if (!this.check(m.reply_to, `request ${JSON.stringify(m.body)} arrived without reply_to`)) return;
            pending.push({ to: m.reply_to, correlation_id: m.message_id, body: `re: ${m.body}` });
            flush();
        });

        const cli = this.connect(`${this.run}-rhea-requester`);
        const dyn = cli.open_receiver({ source: { dynamic: true }, credit_window: 10 });
        dyn.on('message', (ctx) => {
            const m = ctx.message;
            this.received.push(m.body);
            const want = ids.get(m.body);
            if (!this.check(want !== undefined, `unexpected reply ${JSON.stringify(m.body)}`)) return;
            if (!this.check(m.correlation_id === want,
                `reply ${JSON.stringify(m.body)} has correlation_id ${JSON.stringify(m.correlation_id)}, want ${JSON.stringify(want)}`)) return;
            if (this.received.length === this.sent.length && this.checkBodies()) this.finish();
        });

        const opened = new Set();
        let reqSnd = null;
        const onOpen = (link) => () => {
            opened.add(link);
            if (reqSnd || opened.size < 3) return;
            const replyTo = dyn.source && dyn.source.address;
            this.detail.reply_to = replyTo;
            if (!this.check(replyTo, 'the broker gave the dynamic receiver no address')) return;
            reqSnd = cli.open_sender(addr);
            this.expect(`credit on the sender to ${addr}`);
            reqSnd.once('sendable', () => {
                for (let i = 1; i <= 3; i++) {
                    const body = `${this.run} request ${i}`;
                    const id = `${this.run}-req-${i}`;
                    ids.set(`re: ${body}`, id);
                    reqSnd.send({ message_id: id, reply_to: replyTo, body });
                    this.sent.push(`re: ${body}`);
                }
                this.expect(`3 replies on ${replyTo}`);
            });
        };
        reqRcv.once('receiver_open', onOpen(reqRcv));
        anon.once('sender_open', onOpen(anon));
        dyn.once('receiver_open', onOpen(dyn));
        this.expect("the broker to attach the responder's links and the dynamic receiver");
    }
}

const CASES = [QueueCase, TopicCase, DurableCase, RequestReplyCase];

async function main(argv) {
    if (argv.length < 2) {
        process.stderr.write('usage: rhea_client.js ADDRESS RUN_ID [CASE...]\n');
        return 2;
    }
    const m = /^(?:amqp:\/\/)?\[?([^\]]+?)\]?:(\d+)$/.exec(argv[0]);
    if (!m) {
        process.stderr.write(`address ${JSON.stringify(argv[0])} is not host:port\n`);
        return 2;
    }
    const [host, port] = [m[1], Number(m[2])];
    const run = argv[1];
    const known = CASES.map((c) => c.caseName);
    const names = argv.length > 2 ? argv.slice(2) : known;
    const unknown = names.filter((n) => !known.includes(n));
    if (unknown.length) {
        process.stderr.write(`unknown case(s) ${unknown.join(', ')}; known: ${known.join(', ')}\n`);
        return 2;
    }
    let failed = 0;
    for (const C of CASES) {
        if (!names.includes(C.caseName)) continue;
        const c = new C(host, port, run);
        const start = Date.now();
        await c.start();
        if (!c.done) c.error = c.error || 'the case ended before it finished';
        const res = c.result();
        res.ms = Date.now() - start;
        process.stdout.write(JSON.stringify(res) + '\n');
        if (!res.passed) {
            failed++;
            process.stderr.write(`FAIL ${CLIENT} ${c.name}: ${c.error}\n`);
        }
    }
    return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
    // Writes to pipes and files are synchronous on Linux: exiting at once
    // loses no output, and no socket left half-closed keeps us alive.
    (code) => process.exit(code),
    (e) => {
        process.stderr.write(`rhea_client.js: ${e && e.stack ? e.stack : e}\n`);
        process.exit(1);
    });

package conform

import "time"

// Retained MQTT messages, moved from conformance/mqtt_test.go
// (TestConformanceMQTTRetained): the replay half runs on any broker, the
// restart half needs --restart-cmd.

// mqttRetainedReplay: a new subscriber gets the last retained message of
// each matching topic, flagged retained; an empty retained payload clears
// the topic; a live RETAIN publication reaches existing subscribers
// without the flag.
func mqttRetainedReplay(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	pub := MQTTConnect(t, addr, base+"-pub")
	MQTTPub(t, pub, base+"/a", 1, true, "a1")
	MQTTPub(t, pub, base+"/a", 1, true, "a2")
	MQTTPub(t, pub, base+"/b", 0, true, "b1")
	MQTTPub(t, pub, base+"/c", 1, true, "c1")
	MQTTPub(t, pub, base+"/c", 1, true, "") // clears c
	// The retained messages of this case are cleared at its end, so that
	// a long-lived broker does not keep them.
	t.Cleanup(func() {
		for _, topic := range []string{base + "/a", base + "/b"} {
			pub.Publish(topic, 1, true, []byte{}).WaitTimeout(wait)
		}
	})

	sub := MQTTConnect(t, addr, base+"-sub")
	ch := MQTTSub(t, sub, base+"/+", 1)
	got := map[string]string{}
	for i := 0; i < 2; i++ {
		m := ch.Next(t)
		if !m.Retained() {
			t.Fatalf("replayed %s without the RETAIN flag", m.Topic())
		}
		got[m.Topic()] = string(m.Payload())
	}
	if got[base+"/a"] != "a2" || got[base+"/b"] != "b1" || len(got) != 2 {
		t.Fatalf("retained replay %v, want a=a2 b=b1 and nothing for c", got)
	}
	// Live messages published with RETAIN reach existing subscribers
	// without it; the live one after the replay also shows that c's
	// cleared message did not come.
	MQTTPub(t, pub, base+"/a", 1, true, "a3")
	if m := ch.Next(t); m.Retained() || string(m.Payload()) != "a3" || m.Topic() != base+"/a" {
		t.Fatalf("live retained publish: %s retained=%v %q, want %s/a a3 not retained", m.Topic(), m.Retained(), m.Payload(), base)
	}
	ch.None(t, 200*time.Millisecond)
}

// mqttRetainedAcrossRestart: a retained message is persistent; it is
// replayed after a broker restart.
func mqttRetainedAcrossRestart(t *T) {
	base := t.Uniq()
	pub := MQTTConnect(t, t.Addr(MQTT), base+"-pub")
	MQTTPub(t, pub, base+"/a", 1, true, "kept")
	t.Restart()
	sub := MQTTConnect(t, t.Addr(MQTT), base+"-sub")
	t.Cleanup(func() { sub.Publish(base+"/a", 1, true, []byte{}).WaitTimeout(wait) })
	ch := MQTTSub(t, sub, base+"/a", 0)
	if m := ch.Next(t); string(m.Payload()) != "kept" || !m.Retained() {
		t.Fatalf("after restart: %q retained=%v, want kept retained", m.Payload(), m.Retained())
	}
}

func init() {
	mq := []string{MQTT}
	register(
		Case{Name: "mqtt/retained/replay", Needs: mq, Run: mqttRetainedReplay,
			Pins:   "a new subscriber gets each matching topic's last retained message flagged retained; an empty one clears; live RETAIN publications arrive unflagged",
			Source: "[MQTT-3.3.1-5], [MQTT-3.3.1-6], [MQTT-3.3.1-10], [MQTT-3.3.1-9]; RetainedMessageSubscriptionRecoveryPolicy"},
		Case{Name: "mqtt/retained/across-restart", Needs: mq, Run: mqttRetainedAcrossRestart, Restart: true, Timeout: 2 * time.Minute,
			Pins:   "a retained message survives a broker restart",
			Source: "RetainedMessageSubscriptionRecoveryPolicy (retained messages are persistent); KahaDB recovery"},
	)
}

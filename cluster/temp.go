package cluster

import (
	"slices"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// Temporary destinations across the network (bridgeTempDestinations, true
// by default as in ActiveMQ 5.17):
//
//   - The bridge also subscribes to the peer's temporary destination
//     advisories (ActiveMQ.Advisory.TempQueue and .TempTopic, in the same
//     composite subscription as the consumer advisories, so a temporary
//     queue is announced before the consumers on it). Each one the peer
//     creates is created here under the same name, owned by the bridge's
//     local connection (engine.Conn.AddTemp), as ActiveMQ's bridge
//     registers the peer's DestinationInfo with its local broker; each one
//     the peer deletes is deleted here. They all go when the bridge's
//     connection closes.
//   - The peer's consumers on temporary destinations are demand like any
//     other (the destination filters do not apply to them, as in
//     ActiveMQ): a message sent here to the peer's temporary queue — the
//     reply to a request whose JMSReplyTo is on the peer — is forwarded.
//   - A temporary destination that already exists here (one of this
//     broker's own, announced back by a bridge the other way) is left
//     alone.

// tempAdvisoryTopics are the temporary destination advisories the bridge
// subscribes to (AdvisorySupport.TEMP_DESTINATION_COMPOSITE_ADVISORY_TOPIC).
var tempAdvisoryTopics = []string{
	engine.AdvisoryPrefix + message.TempQueue.String(),
	engine.AdvisoryPrefix + message.TempTopic.String(),
}

// tempAdvisory handles a DestinationInfo advisory from the peer.
func (bc *bridgeConn) tempAdvisory(di *wire.DestinationInfo) {
	if di.Destination == nil {
		return
	}
	d := marshal.DestToEngine(di.Destination)
	if !d.Type.IsTemp() {
		return
	}
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	switch di.OperationType {
	case 0: // add
		if slices.Contains(bc.temps, d) || slices.Contains(bc.b.e.Destinations(), d) {
			return
		}
		if err := bc.lc.AddTemp(d); err != nil {
			bc.log.Warn("network bridge cannot create the peer's temporary destination", "dest", d.String(), "err", err)
			return
		}
		bc.temps = append(bc.temps, d)
		bc.log.Info("network bridge added temporary destination", "dest", d.String())
	case 1: // remove
		i := slices.Index(bc.temps, d)
		if i < 0 {
			return
		}
		bc.temps = slices.Delete(bc.temps, i, i+1)
		if err := bc.lc.DeleteTemp(d); err != nil {
			bc.log.Debug("network bridge: deleting a temporary destination failed", "dest", d.String(), "err", err)
			return
		}
		bc.log.Info("network bridge removed temporary destination", "dest", d.String())
	}
}

package engine

import (
	"container/list"

	"wharf/engine/message"
)

// groupMap remembers which consumer owns each message group of a queue, as
// ActiveMQ's CachedMessageGroupMap does: at most size groups, the least
// recently used forgotten first (its next message is assigned afresh).
// Owned by the queue's shard.
type groupMap struct {
	size  int
	byID  map[string]*list.Element
	order list.List // of *groupEntry, most recently used at the front
}

type groupEntry struct {
	id    string
	owner *part
}

func newGroupMap(size int) *groupMap {
	if size <= 0 {
		size = 1024
	}
	return &groupMap{size: size, byID: map[string]*list.Element{}}
}

func (g *groupMap) owner(id string) *part {
	el := g.byID[id]
	if el == nil {
		return nil
	}
	g.order.MoveToFront(el)
	return el.Value.(*groupEntry).owner
}

func (g *groupMap) assign(id string, p *part) {
	if el := g.byID[id]; el != nil {
		el.Value.(*groupEntry).owner = p
		g.order.MoveToFront(el)
		return
	}
	g.byID[id] = g.order.PushFront(&groupEntry{id: id, owner: p})
	if g.order.Len() > g.size {
		old := g.order.Back()
		g.order.Remove(old)
		delete(g.byID, old.Value.(*groupEntry).id)
	}
}

func (g *groupMap) close(id string) {
	if el := g.byID[id]; el != nil {
		g.order.Remove(el)
		delete(g.byID, id)
	}
}

// release forgets every group p owns; their next messages go to whoever
// dispatch picks.
func (g *groupMap) release(p *part) {
	for el := g.order.Front(); el != nil; {
		next := el.Next()
		if ge := el.Value.(*groupEntry); ge.owner == p {
			g.order.Remove(el)
			delete(g.byID, ge.id)
		}
		el = next
	}
}

// pickGrouped chooses the consumer for a message of group gid: its owner if
// the group has one (the message waits while the owner has no credit),
// otherwise the consumer pick would choose, which then owns the group.
// first reports that the message opens the group for that consumer.
func (d *destination) pickGrouped(e *entry, gid string) (p *part, anyCredit, first bool) {
	if d.groups == nil {
		d.groups = newGroupMap(d.policy.MessageGroupCacheSize)
	}
	if owner := d.groups.owner(gid); owner != nil {
		if owner.sub.hasCredit() && owner.sub.matches(e.msg, e.redeliveries) {
			return owner, true, false
		}
		// The group waits for its owner; others may still take other
		// messages, which is all the caller needs to know to go on.
		return nil, true, false
	}
	p, anyCredit = d.pickAny(e)
	if p != nil {
		d.groups.assign(gid, p)
		first = true
	}
	return p, anyCredit, first
}

// markFirstInGroup gives e a copy of its message carrying
// JMSXGroupFirstForConsumer=true, as ActiveMQ sets on the message that
// assigns a group to a consumer. The shared message is never changed.
func markFirstInGroup(e *entry) {
	c := e.msg.Clone()
	// The original encoding stays: the flag is a header a protocol adds to
	// it (OpenWire's JMSXGroupFirstForConsumer), not a change to the body.
	c.Original = e.msg.Original
	c.Props.Set("JMSXGroupFirstForConsumer", message.BoolValue(true))
	e.msg = c
}

package engine

import (
	"container/list"
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

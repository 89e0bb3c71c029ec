package jolokia

// info is an MBean's description in a list answer, in Jolokia's shape:
// class, desc, attr (name -> type, desc, rw) and op (name -> args, ret,
// desc; a list of them for an overloaded name).
func (b *mbean) info() map[string]any {
	attrs := map[string]any{}
	for _, a := range b.attrs {
		attrs[a.name] = map[string]any{"type": a.typ, "desc": a.desc, "rw": b.setters[a.name] != nil}
	}
	ops := map[string]any{}
	for _, o := range b.operations() {
		args := make([]any, len(o.args))
		for i, a := range o.args {
			args[i] = map[string]any{"name": a.name, "type": a.typ, "desc": a.desc}
		}
		one := map[string]any{"args": args, "ret": o.ret, "desc": o.desc}
		switch prev := ops[o.name].(type) {
		case nil:
			ops[o.name] = one
		case map[string]any:
			ops[o.name] = []any{prev, one}
		case []any:
			ops[o.name] = append(prev, one)
		}
	}
	out := map[string]any{"class": b.class, "desc": b.desc, "attr": attrs}
	if len(ops) > 0 {
		out["op"] = ops
	}
	return out
}

// list answers a list request: every MBean by domain and key property
// list, or the part of that tree the path names. A path's first two
// elements are a domain and an ObjectName's key properties, in any
// order, as Jolokia reads them.
func (h *Handler) list(snap *snapshot, q *request) (any, error) {
	parts := q.pathParts()
	if len(parts) >= 2 {
		on, err := parseObjectName(parts[0] + ":" + parts[1])
		if err != nil {
			return nil, err
		}
		beans := snap.find(on)
		if len(beans) == 0 {
			return nil, instanceNotFound("%s", on.canonical())
		}
		if !on.isPattern() {
			return navigate(beans[0].info(), parts[2:])
		}
		out := map[string]any{}
		for _, b := range beans {
			out[h.propsKey(q, b.name)] = b.info()
		}
		return navigate(out, parts[2:])
	}
	tree := map[string]any{}
	for _, b := range snap.all() {
		d, _ := tree[b.name.domain].(map[string]any)
		if d == nil {
			d = map[string]any{}
			tree[b.name.domain] = d
		}
		d[h.propsKey(q, b.name)] = b.info()
	}
	return navigate(tree, parts)
}

// propsKey is an MBean's key within its domain in a list answer.
func (h *Handler) propsKey(q *request, on objectName) string {
	if q.config["canonicalNaming"] == "false" {
		return joinProps(on.props, false)
	}
	return on.canonicalProps()
}

package kahadb

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"wharf/engine"
)

// Scheduled jobs ride in KahaTraceCommand records, which ActiveMQ's replay
// ignores: a Wharf journal stays loadable by ActiveMQ, whose own scheduler
// keeps jobs in a separate store Wharf does not write.
//
// DEVIATION: ActiveMQ keeps scheduled jobs in <dataDir>/scheduler with its
// own journal; Wharf keeps them in the shard's journal, so an ActiveMQ
// directory's scheduled jobs are not recovered by Wharf (nor Wharf's by
// ActiveMQ).
const (
	jobAddPrefix    = "wharf:job:add:"
	jobRemovePrefix = "wharf:job:remove:"
)

type jobRecord struct {
	ID      string `json:"id"`
	Cron    string `json:"cron,omitempty"`
	Delay   int64  `json:"delay,omitempty"`
	Period  int64  `json:"period,omitempty"`
	Repeat  int32  `json:"repeat,omitempty"`
	Start   int64  `json:"start"`
	Next    int64  `json:"next"`
	Message string `json:"message"` // base64 of the OpenWire v11 frame
}

func encodeJob(j *engine.Job) (string, error) {
	b, err := marshalMessage(j.Msg, j.Msg.RedeliveryCounter)
	if err != nil {
		return "", err
	}
	rec, err := json.Marshal(jobRecord{
		ID: j.ID, Cron: j.Cron, Delay: j.Delay, Period: j.Period, Repeat: j.Repeat,
		Start: j.Start, Next: j.Next, Message: base64.StdEncoding.EncodeToString(b),
	})
	if err != nil {
		return "", err
	}
	return jobAddPrefix + string(rec), nil
}

func decodeJob(trace string) (*engine.Job, error) {
	var r jobRecord
	if err := json.Unmarshal([]byte(strings.TrimPrefix(trace, jobAddPrefix)), &r); err != nil {
		return nil, fmt.Errorf("scheduled job record: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(r.Message)
	if err != nil {
		return nil, fmt.Errorf("scheduled job %s message: %w", r.ID, err)
	}
	m, err := unmarshalMessage(b)
	if err != nil {
		return nil, fmt.Errorf("scheduled job %s message: %w", r.ID, err)
	}
	return &engine.Job{ID: r.ID, Msg: m, Cron: r.Cron, Delay: r.Delay, Period: r.Period, Repeat: r.Repeat, Start: r.Start, Next: r.Next}, nil
}

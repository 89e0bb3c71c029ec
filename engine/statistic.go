package engine

// Statistic is a count of samples with their total, smallest and largest,
// as ActiveMQ's TimeStatisticImpl and SizeStatisticImpl keep them. Like
// theirs, Min is 0 until a sample is added, and a sample of 0 leaves the
// next sample free to become the minimum (ActiveMQ tests
// "value < min || min == 0").
type Statistic struct {
	Count, Total, Min, Max int64
}

// add records one sample. It is called on a shard goroutine for a
// destination the shard owns: plain fields, no atomics.
func (s *Statistic) add(v int64) {
	s.Count++
	s.Total += v
	if v > s.Max {
		s.Max = v
	}
	if v < s.Min || s.Min == 0 {
		s.Min = v
	}
}

// Average is Total/Count, 0 without samples (getAverageTime,
// getAverageSize).
func (s Statistic) Average() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.Total) / float64(s.Count)
}

// Merge adds o's samples to s, as a parent statistic sees its children's
// (the broker's DestinationStatistics over every destination).
func (s *Statistic) Merge(o Statistic) {
	if o.Count == 0 {
		return
	}
	s.Count += o.Count
	s.Total += o.Total
	if o.Max > s.Max {
		s.Max = o.Max
	}
	if o.Min != 0 && (o.Min < s.Min || s.Min == 0) {
		s.Min = o.Min
	}
}

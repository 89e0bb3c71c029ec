package wharfproc

// PID is the process id of the running wharf, for sampling /proc/PID
// (the soak test reads its RSS and open files there).
func (p *Proc) PID() int { return p.cmd.Process.Pid }

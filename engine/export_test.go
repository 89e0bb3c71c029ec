package engine

// Exported for the external tests of audit.go.

// NewAuditWindow is newAuditWindow.
func NewAuditWindow(depth int) *auditWindow { return newAuditWindow(depth) }

// TestSet is testSet.
func (w *auditWindow) TestSet(seq int64) bool { return w.testSet(seq) }

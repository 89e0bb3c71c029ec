package console

import (
	"html/template"
	"strconv"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"bytes": humanBytes,
	// barClass colours a usage bar by how full it is.
	"barClass": func(p int) string {
		switch {
		case p >= 90:
			return "bar crit"
		case p >= 70:
			return "bar warn"
		}
		return "bar"
	},
	// width is a usage bar's CSS class for its filled part, in steps of
	// 5 % (the CSP allows no inline styles).
	"width": func(p int) string { return "w" + strconv.Itoa(min(max(p, 0), 100)/5*5) },
	"arrow": func(col, sort, order string) string {
		if col != sort {
			return ""
		}
		if order == "desc" {
			return " ▾"
		}
		return " ▴"
	},
}

// humanBytes prints a byte count in binary units; 0 limits print as
// "unlimited" where the template asks.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTPE"[exp]) + "iB"
}

package drill

import "github.com/drainkit/drainkit/cmd/drainkit/internal/textwidth"

// reportWidth is the width cfg's text report fits (textwidth.Columns,
// issue 33), 0 for no limit: --wide (Config.Wide) keeps every column of
// every table and breaks no line.
func reportWidth(cfg Config) int {
	if cfg.Wide {
		return 0
	}
	return textwidth.Columns
}

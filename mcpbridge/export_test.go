package mcpbridge

// Remote is remote, for the package's external tests.
func (t Target) Remote() bool { return t.remote() }

package proxy

// WithQueue is cfg with a queue of n exchanges for the checks, so a test fills it with a few.
func WithQueue(cfg Config, n int) Config {
	cfg.queue = n
	return cfg
}

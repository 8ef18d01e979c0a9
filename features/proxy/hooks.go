package proxy

import (
	"errors"
	"fmt"
	"time"

	"github.com/partnersim/partnersim/features/laws"
)

// hookTimeout is the deployment's callback timeout (decisions D8).
const hookTimeout = 10 * time.Second

// checkDelivery judges one webhook delivery forwarded to the partner's receiver: the
// deployment's side (its signature and body) and the receiver's (its answer and its time).
func (p *Proxy) checkDelivery(x *exchange) {
	b, at, ex := p.book, x.end, "delivery "+x.header.Get("X-Partner-Webhook-Id")+" "+x.String()
	if len(p.cfg.SigningSecrets) > 0 {
		b.check(HookSignature, ex, verify(x.header.Get("X-Partner-Webhook-Signature"), x.reqBody, p.cfg.SigningSecrets), at)
	}
	if p.cfg.Checker != nil {
		b.check(HookSchema, ex, p.cfg.Checker.CheckEvent(x.header, x.reqBody), at)
	}
	if x.err != nil {
		b.observe(HookAnswerTime, ex, "expected the receiver to answer, got no answer: "+x.err.Error(), at)
		return
	}
	if d := x.end.Sub(x.start); d > hookTimeout {
		b.observe(HookAnswerTime, ex, fmt.Sprintf("expected an answer within the %s timeout, got one after %s", hookTimeout, d.Round(time.Millisecond)), at)
	} else {
		b.observe(HookAnswerTime, ex, "", at)
	}
	id := x.header.Get("X-Partner-Webhook-Id")
	if id == "" {
		return
	}
	s := p.state
	if s.hooks == nil {
		s.hooks = map[string]int{}
	}
	if first, ok := s.hooks[id]; ok && first/100 == 2 {
		if x.status/100 != 2 {
			b.observe(HookRedelivery, ex, fmt.Sprintf("expected a redelivery answered 2xx like the first (%d), got %d", first, x.status), at)
		} else {
			b.observe(HookRedelivery, ex, "", at)
		}
	}
	if _, ok := s.hooks[id]; !ok || x.status/100 == 2 {
		if len(s.hooks) > 100000 {
			clear(s.hooks)
		}
		s.hooks[id] = x.status
	}
}

// verify accepts a signature by any of the secrets (two during a rotation's overlap).
func verify(header string, body []byte, secrets []string) error {
	var errs []error
	for _, s := range secrets {
		err := laws.VerifySignature(header, body, s)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	if len(secrets) == 1 {
		return errs[0]
	}
	return fmt.Errorf("expected a v1 signature by one of the %d signing secrets: %w", len(secrets), errors.Join(errs...))
}

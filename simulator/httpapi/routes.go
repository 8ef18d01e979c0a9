package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"partnersim/simulator"
)

// addRoutes registers every route. Paths are exactly the spec's, trailing slashes included.
func (s *Server) addRoutes() {
	s.handle(http.MethodGet, "/health", s.handleHealth())
	for _, v := range s.cfg.APIVersions {
		p := "/" + v
		api := func(scope simulator.Scope) []echo.MiddlewareFunc {
			return []echo.MiddlewareFunc{s.record, s.requireKey(scope), s.inject}
		}
		s.handle(http.MethodGet, p+"/health", s.handleHealth())
		s.handle(http.MethodGet, p+"/users/:user_account_id/", s.handleUserDetail(), api(simulator.ScopeReadUser)...)
		s.handle(http.MethodGet, p+"/users/", s.handleUserList(), api(simulator.ScopeReadUser)...)
		s.handle(http.MethodGet, p+"/orders/", s.handleOrderList(), api(simulator.ScopeReadOrders)...)
		s.handle(http.MethodGet, p+"/transactions/:transaction_id/", s.handleTransaction(), api(simulator.ScopeReadOrders)...)
		s.handle(http.MethodPost, p+"/sessions/revoke/", s.handleRevokeSessions(), api(simulator.ScopeManageSessions)...)
		hooks := api(simulator.ScopeManageWebhooks)
		s.handle(http.MethodGet, p+"/webhooks/subscriptions", s.handleListSubscriptions(), hooks...)
		s.handle(http.MethodPost, p+"/webhooks/subscriptions", s.handleCreateSubscription(v), hooks...)
		s.handle(http.MethodDelete, p+"/webhooks/subscriptions/:subscription_id", s.handleDeleteSubscription(), hooks...)
		s.handle(http.MethodPost, p+"/webhooks/subscriptions/:subscription_id/test", s.handleTestSubscription(), hooks...)
	}
	if s.deps.Sandbox == nil {
		return
	}
	// The control plane (decisions D9), never under a version prefix.
	c := "/_sandbox"
	t := s.requireToken
	s.handle(http.MethodPost, c+"/institutions", s.handleCreateInstitution(), t)
	s.handle(http.MethodGet, c+"/institutions", s.handleListInstitutions(), t)
	s.handle(http.MethodPost, c+"/institutions/:institution_id/keys", s.handleIssueKey(), t)
	s.handle(http.MethodDelete, c+"/keys/:key_id", s.handleRevokeKey(), t)
	s.handle(http.MethodPost, c+"/institutions/:institution_id/members", s.handleCreateMember(), t)
	s.handle(http.MethodPost, c+"/institutions/:institution_id/users", s.handleCreateUser(), t)
	s.handle(http.MethodPut, c+"/institutions/:institution_id/prices", s.handleSetPrices(), t)
	s.handle(http.MethodPost, c+"/institutions/:institution_id/signing-secret/rotate", s.handleRotateSecret(), t)
	s.handle(http.MethodGet, c+"/users/:platform_id", s.handleGetUser(), t)
	s.handle(http.MethodPost, c+"/users/:platform_id/kyc", s.handleKYC(), t)
	s.handle(http.MethodPost, c+"/orders", s.handlePlaceOrder(), t)
	s.handle(http.MethodPost, c+"/transactions", s.handlePlaceTransaction(), t)
	s.handle(http.MethodGet, c+"/transactions/:transaction_id", s.handleGetTransactionAny(), t)
	s.handle(http.MethodPost, c+"/transactions/:transaction_id/fill", s.handleFill(), t)
	s.handle(http.MethodPost, c+"/transactions/:transaction_id/cancel", s.handleEndTransaction(simulator.OrderCanceled), t)
	s.handle(http.MethodPost, c+"/transactions/:transaction_id/fail", s.handleEndTransaction(simulator.OrderFailed), t)
	s.handle(http.MethodGet, c+"/deliveries", s.handleDeliveries(), t)
	s.handle(http.MethodPost, c+"/events/:event_id/redeliver", s.handleRedeliver(), t)
	s.handle(http.MethodPost, c+"/clock/advance", s.handleAdvanceClock(), t)
	s.handle(http.MethodPut, c+"/dns", s.handleSetDNS(), t)
	s.handle(http.MethodGet, c+"/scenarios", s.handleScenarios(), t)
	s.handle(http.MethodPost, c+"/scenarios/:name/run", s.handleRunScenario(), t)
	s.handle(http.MethodGet, c+"/scenarios/runs/:run_id", s.handleScenarioRun(), t)
	s.handle(http.MethodPost, c+"/reset", s.handleReset(), t)
	s.handle(http.MethodGet, c+"/requests", s.handleRequests(), t)
	s.handle(http.MethodGet, c+"/faults", s.handleSetFaults(), t)
	s.handle(http.MethodPut, c+"/faults", s.handleSetFaults(), t)
	s.handle(http.MethodPut, c+"/rate-limit", s.handleSetRateLimit(), t)
	s.handle(http.MethodPost, c+"/snapshots/:name", s.handleSnapshot(false), t)
	s.handle(http.MethodPost, c+"/snapshots/:name/restore", s.handleSnapshot(true), t)
	s.addControlReads(c, t)
}

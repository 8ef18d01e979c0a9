package httpapi_test

import "github.com/partnersim/partnersim/simulator"

func userByUAID(uaid string) simulator.UserFilter {
	return simulator.UserFilter{UserAccountID: &uaid, Limit: 1, SortKey: simulator.SortCreatedAt}
}

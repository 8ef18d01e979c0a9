package validate_test

import (
	"errors"
	"fmt"

	"github.com/partnersim/partnersim/simulator/validate"
)

// A handler reads path, query and body through one collector, then maps
// Err to 422 (validate.Errors) or 400 (validate.ErrBodyParse).
func Example() {
	c := validate.New()
	id := c.PathStr("user_account_id", "u-1")
	q := c.Query(validate.ParseQuery("user_account_id_type=member&per_page=0"))
	typ := q.Enum("user_account_id_type", true, "", "platform", "core", "dbp")
	perPage := q.Int("per_page", 25, validate.Ge(1), validate.Le(100))
	_, _, _ = id, typ, perPage

	var errs validate.Errors
	if err := c.Err(); errors.As(err, &errs) {
		body, _ := errs.MarshalJSON()
		fmt.Println(string(body))
	}
	// Output:
	// {"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"member","ctx":{"expected":"'platform', 'core' or 'dbp'"}},{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}
}

// Control-plane bodies nest objects and lists; locations follow the path.
func ExampleObject() {
	c := validate.New()
	b := c.Body("application/json", []byte(`{"user_account_id":"u","accounts":[{"product":"crypto","cash":"ten"}]}`))
	b.Str("user_account_id")
	b.List("accounts").Each(func(i int, v validate.Value) {
		a := v.Object()
		a.Enum("product", "crypto", "securities", "robo")
		a.Decimal("cash")
	})
	fmt.Println(c.Err())
	// Output:
	// 1 validation error: body.accounts.0.cash: Input should be a valid decimal [type=decimal_parsing]
}

Feature: Get User Detail
  GET /users/{user_account_id}/?user_account_id_type=platform|core|dbp returns one user's
  accounts, values, history, identities and terms (spec §2.3, §4.1). core and dbp ids are
  resolved through the institution's members (decisions D5).

  @spec @sandbox @rule:S2.0 @rule:S2.4 @rule:S2.6 @rule:S2.8 @rule:S4.1.1
  Scenario: A user's detail has every field the spec names
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash   | holdings |
      | crypto     | approved   | 250.00 |          |
      | securities | approved   | 20.00  | AAPL 2   |
      | roth_ira   | pending    |        |          |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the response status is 200
    And the JSON at "user_account_id" is "alice"
    And the JSON at "total_current_market_value" is a decimal string
    And the JSON at "accounts" has 3 elements
    And every element of the JSON at "accounts" has the keys "product, current_market_value, kyc_status"
    And every element of the JSON at "accounts" has "current_market_value" as a decimal string
    And the JSON at "historical_market_value" has the keys "all_time, past_day, past_week, past_month, past_year"
    And the JSON at "historical_market_value.all_time" is an array
    And the JSON at "historical_market_value.past_day" is an array
    And the JSON at "historical_market_value.past_week" is an array
    And the JSON at "historical_market_value.past_month" is an array
    And the JSON at "historical_market_value.past_year" is an array
    And the JSON at "identities" has the keys "core_ids, dbp_ids, platform_user_identifier"
    And the JSON at "identities.core_ids" is an array
    And the JSON at "identities.dbp_ids" is an array
    And the JSON at "identities.platform_user_identifier" is "{alice}"
    And the JSON at "terms_and_conditions.accepted_at" is "2025-12-01T09:30:00Z"
    And the JSON at "terms_and_conditions.version" is "2025-11"

  @spec @rule:S4.1.1 @rule:D5.8 @rule:S2.6 @rule:S2.7 @rule:S2.0
  Scenario: An existing user's detail is consistent
    Given an existing user "someone"
    When I GET "/users/{someone}/?user_account_id_type=platform"
    Then the response status is 200
    And the JSON at "user_account_id" is "{someone.user_account_id}"
    And the JSON at "identities.platform_user_identifier" is "{someone}"
    And the JSON at "total_current_market_value" equals the sum of the JSON at "accounts.#.current_market_value"
    And every element of the JSON at "accounts" has "product" as a string
    And every element of the JSON at "accounts" has "kyc_status" as a string
    And the JSON at "historical_market_value" has the keys "all_time, past_day, past_week, past_month, past_year"
    And every element of the JSON at "historical_market_value.past_day" has the keys "as_of, cost_basis, value"
    And every element of the JSON at "historical_market_value.past_day" has "as_of" as a timestamp
    And every element of the JSON at "historical_market_value.past_day" has "value" as a decimal string
    And every element of the JSON at "historical_market_value.past_day" has "cost_basis" as a decimal string
    And the JSON at "identities" has the keys "core_ids, dbp_ids, platform_user_identifier"
    And the JSON at "terms_and_conditions.accepted_at" is a timestamp
    And the JSON at "terms_and_conditions.version" is a string

  @spec @sandbox @rule:D5.8
  Scenario: The total market value is the sum over the accounts
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash   | holdings |
      | crypto     | approved   | 250.00 |          |
      | securities | approved   | 20.00  | AAPL 2   |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "total_current_market_value" equals the sum of the JSON at "accounts.#.current_market_value"

  @assumed @sandbox @rule:D5.6 @rule:D5.7
  Scenario: Market values are holdings at current prices plus cash, in cents
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash   | holdings |
      | crypto     | approved   | 250.00 |          |
      | securities | approved   | 20.00  | AAPL 2   |
      | roth_ira   | pending    |        |          |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==crypto).current_market_value" is "250.00"
    And the JSON at "accounts.#(product==securities).current_market_value" is "400.00"
    And the JSON at "accounts.#(product==roth_ira).current_market_value" is "0.00"
    And the JSON at "total_current_market_value" is "650.00"

  @assumed @sandbox @rule:D5.7 @rule:D5.8
  Scenario: Money is exact decimal, beyond what a float can hold to the cent
    # 2^46 + 0.01: a float64 holds it as …664.015625, which prints as "…664.02".
    Given a user "alice" with accounts:
      | product    | kyc_status | cash              |
      | crypto     | approved   | 70368744177664.01 |
      | securities | approved   | 0.02              |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==crypto).current_market_value" is "70368744177664.01"
    And the JSON at "total_current_market_value" is "70368744177664.03"
    And the JSON at "total_current_market_value" equals the sum of the JSON at "accounts.#.current_market_value"

  @spec @sandbox @rule:S2.5
  Scenario: kyc_approved_at is present while approved and absent while pending
    Given a user "alice" with accounts:
      | product  | kyc_status | cash  |
      | crypto   | approved   | 10.00 |
      | roth_ira | pending    |       |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==crypto).kyc_status" is "approved"
    And the JSON at "accounts.#(product==crypto).kyc_approved_at" is a timestamp
    And the JSON at "accounts.#(product==roth_ira).kyc_status" is "pending"
    And the JSON at "accounts.#(product==roth_ira).kyc_approved_at" is absent

  @assumed @sandbox @rule:D5.5
  Scenario: A given approval time is reported as given
    Given a user "alice" with accounts:
      | product | kyc_status | cash  | kyc_approved_at      |
      | crypto  | approved   | 10.00 | 2026-01-10T12:00:00Z |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is "2026-01-10T12:00:00Z"

  @assumed @sandbox @rule:D5.13
  Scenario: kyc_approved_at is kept through every later move, back to approved included
    Given a user "alice" with accounts:
      | product | kyc_status | cash  | kyc_approved_at      |
      | crypto  | approved   | 10.00 | 2026-01-10T12:00:00Z |
    When the "crypto" account of "alice" moves to "account_takeover"
    And I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is "2026-01-10T12:00:00Z"
    When the "crypto" account of "alice" moves to "approved"
    And I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is "2026-01-10T12:00:00Z"
    When the "crypto" account of "alice" moves to "closed"
    And I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is "2026-01-10T12:00:00Z"

  @assumed @sandbox @rule:D5.13 @rule:D5.5
  Scenario: kyc_approved_at is absent until the first approval, which it then keeps
    Given a user "bob" with accounts:
      | product | kyc_status | cash |
      | crypto  | pending    | 0.00 |
    When the "crypto" account of "bob" moves to "rejected"
    And the "crypto" account of "bob" moves to "pending"
    And the "crypto" account of "bob" moves to "document_requested"
    And I GET "/users/{bob}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is absent
    When the "crypto" account of "bob" moves to "approved"
    And I GET "/users/{bob}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is a timestamp
    And I remember the JSON at "accounts.0.kyc_approved_at" as "first"
    When the "crypto" account of "bob" moves to "account_takeover"
    And the "crypto" account of "bob" moves to "approved"
    And I GET "/users/{bob}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.kyc_approved_at" is "{first}"

  @spec @sandbox @rule:S2.7
  Scenario: Value points carry as_of, cost_basis and value
    Given a user "alice" with accounts:
      | product | kyc_status | cash    |
      | crypto  | approved   | 1000.00 |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then every element of the JSON at "historical_market_value.past_week" has the keys "as_of, cost_basis, value"
    And every element of the JSON at "historical_market_value.past_week" has "as_of" as a timestamp
    And every element of the JSON at "historical_market_value.past_week" has "cost_basis" as a decimal string
    And every element of the JSON at "historical_market_value.past_week" has "value" as a decimal string

  @assumed @sandbox @rule:D5.9
  Scenario: Generated history has decisions D5's resolution and ends at the current value
    Given a user "alice" with accounts:
      | product | kyc_status | cash    |
      | crypto  | approved   | 1000.00 |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "historical_market_value.past_day" has 24 elements
    And the JSON at "historical_market_value.past_week" has 7 elements
    And the JSON at "historical_market_value.past_month" has 30 elements
    And the JSON at "historical_market_value.past_year" has 52 elements
    And the JSON at "historical_market_value.past_week.6.value" is "1000.00"
    And the history "past_day" is 24 points one hour apart, the last at the start of the current hour worth "1000.00"
    And the history "past_week" is 7 points one day apart, the last at the start of the current day worth "1000.00"
    And the history "past_month" is 30 points one day apart, the last at the start of the current day worth "1000.00"
    And the history "past_year" is 52 points one week apart, the last at the start of the current week worth "1000.00"
    And the history "all_time" is 1 point one month apart, the last at the start of the current month worth "1000.00"

  @assumed @sandbox @rule:D5.9
  Scenario: all_time is monthly from the user's creation, not daily
    Given these users:
      | user_account_id | created_at           | product | kyc_status | cash    |
      | since-2025      | 2025-09-15T08:00:00Z | crypto  | approved   | 1000.00 |
    When I GET "/users/{since-2025}/?user_account_id_type=platform"
    Then the response status is 200
    And the history "all_time" is monthly since "2025-09-15T08:00:00Z", the last at the start of the current month worth "1000.00"

  @assumed @rule:D5.9
  Scenario: A funded user's history has decisions D5's resolution from its creation and ends at its current value
    Given the inputs "user_id"
    When I GET "/users/{user_id}/?user_account_id_type=platform"
    Then the response status is 200
    And every history series has decisions D5's resolution since the user's creation, found by bisection, the last carrying its total_current_market_value

  @assumed @rule:D5.10
  Scenario: A user with no funded account has empty history
    Given the inputs "unfunded_user_id"
    When I GET "/users/{unfunded_user_id}/?user_account_id_type=platform"
    Then the response status is 200
    And the JSON at "total_current_market_value" is "0.00"
    And the JSON at "historical_market_value.all_time" is an empty array
    And the JSON at "historical_market_value.past_day" is an empty array
    And the JSON at "historical_market_value.past_week" is an empty array
    And the JSON at "historical_market_value.past_month" is an empty array
    And the JSON at "historical_market_value.past_year" is an empty array

  @spec @sandbox @rule:S4.1.2
  Scenario: A core id resolves to the member's user
    Given a user "alice"
    And a member with "member_number" id "M-1001" and dbp id "D-77" naming "alice"
    When I GET "/users/M-1001/?user_account_id_type=core"
    Then the response status is 200
    And the JSON at "identities.platform_user_identifier" is "{alice}"

  @spec @sandbox @rule:S4.1.2
  Scenario: A dbp id resolves to the member's user
    Given a user "alice"
    And a member with "cif" id "C-2002" and dbp id "D-88" naming "alice"
    When I GET "/users/D-88/?user_account_id_type=dbp"
    Then the response status is 200
    And the JSON at "identities.platform_user_identifier" is "{alice}"

  @assumed @sandbox @rule:S2.8 @rule:D5.4
  Scenario: Resolved users report their own id and every identity naming them
    Given a user "alice"
    And a member with "member_number" id "M-1001" and dbp id "D-77" naming "alice"
    When I GET "/users/M-1001/?user_account_id_type=core"
    Then the JSON at "user_account_id" is "alice"
    And the JSON at "identities.core_ids" contains an element with "id" equal to "M-1001"
    And the JSON at "identities.core_ids.#(id==M-1001).type" is "member_number"
    And the JSON at "identities.dbp_ids.#(id==D-77).type" is "q2"

  @assumed @sandbox @rule:D5.1
  Scenario: A member resolves to its first account that has a user record
    Given a user "alice"
    And a member with "member_number" id "M-3003" and dbp id "none" naming "usr_missing, alice"
    When I GET "/users/M-3003/?user_account_id_type=core"
    Then the response status is 200
    And the JSON at "identities.platform_user_identifier" is "{alice}"

  @spec @rule:S4.1.3 @rule:S7.1
  Scenario Outline: An institution without a vendor for the id type answers 400
    Given the inputs "vendorless_key"
    And I use the API key "{vendorless_key}"
    When I GET "/users/X-1/?user_account_id_type=<type>"
    Then the response status is 400
    And the JSON at "detail" is a string

    Examples:
      | type |
      | core |
      | dbp  |

  @assumed @rule:D4.8
  Scenario: The 400 names the id type without a vendor
    Given the inputs "vendorless_key"
    And I use the API key "{vendorless_key}"
    When I GET "/users/X-1/?user_account_id_type=core"
    Then the response is JSON:
      """
      {"detail":"no vendor configured for user_account_id_type: core"}
      """

  @assumed @rule:D3.7
  Scenario: Parameters are validated before business rules
    Given the inputs "vendorless_key"
    And I use the API key "{vendorless_key}"
    When I GET "/users/X-1/?user_account_id_type=email"
    Then the response status is 422

  @spec @rule:S4.1.4 @rule:S7.1
  Scenario: An unknown platform id is 404
    When I GET "/users/usr_does_not_exist/?user_account_id_type=platform"
    Then the response status is 404
    And the JSON at "detail" is a string

  @spec @rule:S4.1.4
  Scenario: An unknown core id is 404
    When I GET "/users/M-NOBODY/?user_account_id_type=core"
    Then the response status is 404
    And the JSON at "detail" is a string

  @spec @sandbox @rule:S4.1.4 @rule:D5.1
  Scenario: A member none of whose accounts has a user record is 404
    Given a member with "cif" id "C-4004" and dbp id "none" naming "usr_missing"
    When I GET "/users/C-4004/?user_account_id_type=core"
    Then the response status is 404

  @spec @rule:S5.5 @rule:D3.8
  Scenario: This institution's users do not exist for another institution's key
    Given the inputs "user_id, core_member_id, dbp_member_id, other_institution_key"
    And I use the API key "{other_institution_key}"
    When I GET "/users/usr_nobody_5005/?user_account_id_type=platform"
    Then the response status is 404
    And I remember the response as "nobody"
    When I GET "/users/{user_id}/?user_account_id_type=platform"
    Then the response is the same as "nobody"
    When I GET "/users/M-NOBODY-5005/?user_account_id_type=core"
    And I remember the response as "no member"
    When I GET "/users/{core_member_id}/?user_account_id_type=core"
    Then the response status is not 200
    And the response is the same as "no member"
    When I GET "/users/D-NOBODY-5005/?user_account_id_type=dbp"
    And I remember the response as "no dbp member"
    When I GET "/users/{dbp_member_id}/?user_account_id_type=dbp"
    Then the response status is not 200
    And the response is the same as "no dbp member"

  @assumed @rule:D5.1 @rule:S4.1.1
  Scenario: A member's core id and dbp id resolve to the same user, which names both
    Given the inputs "core_member_id, dbp_member_id"
    When I GET "/users/{core_member_id}/?user_account_id_type=core"
    Then the response status is 200
    And the JSON at "identities.core_ids" contains an element with "id" equal to "{core_member_id}"
    And the JSON at "identities.dbp_ids" contains an element with "id" equal to "{dbp_member_id}"
    And I remember the JSON at "identities.platform_user_identifier" as "resolved"
    When I GET "/users/{dbp_member_id}/?user_account_id_type=dbp"
    Then the response status is 200
    And the JSON at "identities.platform_user_identifier" is "{resolved}"

  @spec @rule:S4.1.5 @rule:S7.2
  Scenario: A missing user_account_id_type is a validation error
    When I GET "/users/anyone/"
    Then the response status is a client error
    And the response is a validation error naming "user_account_id_type"

  @assumed @rule:D4.2
  Scenario: A missing user_account_id_type is FastAPI's missing item
    When I GET "/users/anyone/"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[{"type":"missing","loc":["query","user_account_id_type"],"msg":"Field required","input":null}]}
      """

  @assumed @rule:D4.2
  Scenario: An unknown user_account_id_type is FastAPI's enum item
    When I GET "/users/anyone/?user_account_id_type=email"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"email","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}
      """

  @assumed @sandbox @rule:D4.9
  Scenario: Text is written exactly as FastAPI's JSON encoder writes it
    Given a user "odd" whose user_account_id is the text "\"q\" back\\slash\ttab\nline\r\b\f\u0001\u001f é ü 中 <&> \u007f \u2028\u2029 end"
    And a user "quote" whose user_account_id is the text "\""
    And a user "backslash" whose user_account_id is the text "\\"
    And a user "printable" whose user_account_id is the text "say \"hi\" to a\\b"
    When I GET "/users/{odd}/?user_account_id_type=platform"
    Then the response status is 200
    And the response body writes "{odd.user_account_id}" as FastAPI's JSON encoder does
    When I GET "/users/{quote}/?user_account_id_type=platform"
    Then the response status is 200
    And the response body writes "{quote.user_account_id}" as FastAPI's JSON encoder does
    When I GET "/users/{backslash}/?user_account_id_type=platform"
    Then the response status is 200
    And the response body writes "{backslash.user_account_id}" as FastAPI's JSON encoder does
    When I GET "/users/?sort_key=user_account_id&sort_order=asc&per_page=100"
    Then the response body writes "{odd.user_account_id}" as FastAPI's JSON encoder does
    And the response body writes "{quote.user_account_id}" as FastAPI's JSON encoder does
    And the response body writes "{backslash.user_account_id}" as FastAPI's JSON encoder does
    And the response body writes "{printable.user_account_id}" as FastAPI's JSON encoder does
    When I GET "/users/{printable}/?user_account_id_type=platform"
    Then the response status is 200
    And the response body writes "{printable.user_account_id}" as FastAPI's JSON encoder does

  @assumed @sandbox @rule:D5.7 @rule:D5.8
  Scenario: Values stay exact where quantity × price no longer fits 64-bit integers
    # 25000.12345678 × 60000.01 is 1.5 × 10^19 in units of 10^-10: beyond int64, within uint64.
    Given the prices are:
      | symbol | price    |
      | BTC    | 60000.01 |
    And a user "whale" with accounts:
      | product | kyc_status | cash | holdings           |
      | crypto  | approved   | 0.01 | BTC 25000.12345678 |
    When I GET "/users/{whale}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.current_market_value" is "1500007657.42"
    And the JSON at "total_current_market_value" is "1500007657.42"
    When I GET "/users/?user_account_id=whale"
    Then the JSON at "items.0.accounts.0.current_market_value" is "1500007657.42"
    And the JSON at "items.0.total_current_market_value" is "1500007657.42"

  @assumed @sandbox @rule:D5.7
  Scenario Outline: A market value rounds half-even to the cent
    Given the prices are:
      | symbol | price |
      | AAPL   | 0.10  |
    And a user "alice" with accounts:
      | product    | kyc_status | cash | holdings        |
      | securities | approved   | 0    | AAPL <quantity> |
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.current_market_value" is "<value>"
    And the JSON at "total_current_market_value" is "<value>"

    Examples:
      | quantity | value | why                            |
      | 0.24     | 0.02  | 0.024: below the half, down     |
      | 0.25     | 0.02  | 0.025: a tie, to the even cent  |
      | 0.26     | 0.03  | 0.026: above the half, up       |
      | 0.35     | 0.04  | 0.035: a tie, to the even cent  |

  @assumed @sandbox @rule:D5.7
  Scenario: Values stay exact across amounts of very different scales
    # 0.00000001 × 0.00000000001 is 10^-19: nineteen places below a whole-unit cash amount.
    Given the prices are:
      | symbol | price         |
      | BTC    | 0.00000000001 |
    And a user "dust" with accounts:
      | product | kyc_status | cash | holdings       |
      | crypto  | approved   | 100  | BTC 0.00000001 |
    When I GET "/users/{dust}/?user_account_id_type=platform"
    Then the JSON at "accounts.0.current_market_value" is "100.00"
    And the JSON at "total_current_market_value" is "100.00"

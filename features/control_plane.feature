@assumed
Feature: Control plane
  The sandbox's own operations under /_sandbox/ (decisions D9), which the other features use to
  create their data: they need the sandbox token, and refuse what the state machines do not allow.
  Every scenario here needs the control plane: a run given no --sandbox-url skips them, saying
  so, whatever the base URL's origin serves under /_sandbox/.

  @sandbox @rule:D9.1
  Scenario: The control plane needs its token
    Given the deployment is a sandbox
    When I GET the control plane "/_sandbox/capabilities" without a sandbox token
    Then the response status is 401
    And the response is JSON:
      """
      {"detail":"Not authenticated"}
      """
    When I GET the control plane "/_sandbox/capabilities" with the sandbox token "not-the-token"
    Then the response status is 401
    And the response is JSON:
      """
      {"detail":"Invalid sandbox token"}
      """

  @sandbox @rule:D9.3
  Scenario: A KYC move the state machine does not allow is 409
    Given a user "alice" with accounts:
      | product | kyc_status | cash |
      | crypto  | closed     | 0.00 |
    When I try to move the "crypto" account of "alice" to "approved"
    Then the response status is 409
    And the JSON at "detail" is a string

  @sandbox @rule:D9.5 @rule:D9.3
  Scenario: Every KYC move of the transition table is allowed, and no other
    Then every KYC move answers as the transition table says:
      | from               | to                                   |
      | pending            | document_requested, approved, rejected |
      | document_requested | pending, approved, rejected          |
      | approved           | closed, account_takeover             |
      | account_takeover   | approved, closed                     |
      | rejected           | pending, closed                      |
      | closed             | none                                 |

  @sandbox @rule:D9.7
  Scenario: Set prices come back as money is written, and are the prices values and fills read
    # Each price's exponent as given differs: 100 (0), 1E+2 (+2), 0.5 (−1), 64000.00 and 0.50
    # (−2), 123.4500 (−4), 3120.12345 (−5).
    Given a user "alice" with accounts:
      | product    | kyc_status | cash  | holdings               |
      | securities | approved   | 10.00 | AAPL 2; MSFT 1; BND 2  |
      | crypto     | approved   | 0.00  | BTC 0.5; ETH 3; SOL 10 |
    When I PUT the control plane "/_sandbox/institutions/{institution_id}/prices" with JSON:
      """
      {"AAPL": "100", "MSFT": "1E+2", "VTI": "0.5", "BTC": "64000.00", "ETH": "0.50", "BND": "123.4500", "SOL": "3120.12345"}
      """
    Then the response status is 200
    And the JSON at "AAPL" is "100.00"
    And the JSON at "MSFT" is "100.00"
    And the JSON at "VTI" is "0.50"
    And the JSON at "BTC" is "64000.00"
    And the JSON at "ETH" is "0.50"
    And the JSON at "BND" is "123.45"
    And the JSON at "SOL" is "3120.12345"
    # A second PUT merges: the answer reads the prices set before back from the store.
    When I PUT the control plane "/_sandbox/institutions/{institution_id}/prices" with JSON:
      """
      {"VOO": "1"}
      """
    Then the response status is 200
    And the JSON at "VOO" is "1.00"
    And the JSON at "AAPL" is "100.00"
    And the JSON at "MSFT" is "100.00"
    And the JSON at "VTI" is "0.50"
    And the JSON at "BTC" is "64000.00"
    And the JSON at "ETH" is "0.50"
    And the JSON at "BND" is "123.45"
    And the JSON at "SOL" is "3120.12345"
    # 2 × 100 + 1 × 100 + 2 × 123.45 + 10.00 cash; 0.5 × 64000 + 3 × 0.50 + 10 × 3120.12345.
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==securities).current_market_value" is "556.90"
    And the JSON at "accounts.#(product==crypto).current_market_value" is "63202.73"
    And the JSON at "total_current_market_value" is "63759.63"
    # A list page values alice at the prices set since she was written, as the detail does.
    When I GET "/users/?user_account_id=alice"
    Then the JSON at "items.0.accounts.#(product==securities).current_market_value" is "556.90"
    And the JSON at "items.0.accounts.#(product==crypto).current_market_value" is "63202.73"
    And the JSON at "items.0.total_current_market_value" is "63759.63"
    When I GET "/users/?product=crypto"
    Then the JSON at "items.#(user_account_id==alice).total_current_market_value" is "63759.63"
    When "alice" buys 4 shares of "VTI" in "securities" as "o1"
    And the transaction of "o1" fills
    And I GET "/transactions/{o1.transaction_id}/"
    Then the JSON at "orders.0.notional" is "2.00"

  @sandbox @rule:D9.7
  Scenario: Amounts written with exponents far from a cent's are valued exactly, on the detail and on a list page
    # Cash 1E+10 (+10), a quantity 1E+4 (+4) at a price of 100 (0), a quantity 2.5E+3 (+2) at
    # 0.50 (−2), and a holding worth 10^-21 (a quantity of 0.00000001 at 0.0000000000001) beside
    # one worth 1: every value and every total is exact to the cent however finely or coarsely
    # its terms are written.
    Given the prices are:
      | symbol | price           |
      | AAPL   | 100             |
      | ETH    | 0.50            |
      | DOGE   | 0.0000000000001 |
      | SOL    | 1               |
    And a user "alice" with accounts:
      | product    | kyc_status | cash  | holdings                           |
      | securities | approved   | 1E+10 | AAPL 1E+4                          |
      | crypto     | approved   | 5E+2  | ETH 2.5E+3; DOGE 0.00000001; SOL 1 |
    # 10,000,000,000 + 10,000 × 100; 500 + 2,500 × 0.50 + 10^-21 + 1.
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==securities).current_market_value" is "10001000000.00"
    And the JSON at "accounts.#(product==crypto).current_market_value" is "1751.00"
    And the JSON at "total_current_market_value" is "10001001751.00"
    When I GET "/users/?user_account_id=alice"
    Then the JSON at "items.0.total_current_market_value" is "10001001751.00"
    And the JSON at "items.0.accounts.#(product==securities).current_market_value" is "10001000000.00"
    And the JSON at "items.0.accounts.#(product==crypto).current_market_value" is "1751.00"

  @sandbox @rule:D9.8
  Scenario: A user_account_id and a member's core_id are an institution's once; another institution may have them too
    Given a user "alice"
    And another institution "globex"
    When I POST the control plane "/_sandbox/institutions/{institution_id}/users" with JSON:
      """
      {"user_account_id":"dup-1","accounts":[]}
      """
    Then the response status is 201
    When I POST the control plane "/_sandbox/institutions/{institution_id}/users" with JSON:
      """
      {"user_account_id":"dup-1","accounts":[]}
      """
    Then the response status is 409
    And the JSON at "detail" is a string
    When I POST the control plane "/_sandbox/institutions/{globex.institution_id}/users" with JSON:
      """
      {"user_account_id":"dup-1","accounts":[]}
      """
    Then the response status is 201
    When I POST the control plane "/_sandbox/institutions/{institution_id}/members" with JSON:
      """
      {"core_id":"M-dup","core_id_type":"member_number","dbp_id":null,"user_ids":["{alice}"]}
      """
    Then the response status is 201
    When I POST the control plane "/_sandbox/institutions/{institution_id}/members" with JSON:
      """
      {"core_id":"M-dup","core_id_type":"member_number","dbp_id":null,"user_ids":["{alice}"]}
      """
    Then the response status is 409
    And the JSON at "detail" is a string
    When I POST the control plane "/_sandbox/institutions/{globex.institution_id}/members" with JSON:
      """
      {"core_id":"M-dup","core_id_type":"member_number","dbp_id":null,"user_ids":[]}
      """
    Then the response status is 201

  @sandbox @rule:D9.9
  Scenario: Adding a member answers the member as stored
    Given a user "alice"
    When I POST the control plane "/_sandbox/institutions/{institution_id}/members" with JSON:
      """
      {"core_id":"C-7001","core_id_type":"cif","dbp_id":"D-7001","user_ids":["{alice}","usr_missing"]}
      """
    Then the response status is 201
    And the response JSON contains:
      """
      {"core_id":"C-7001","core_id_type":"cif","dbp_id":"D-7001","user_ids":["{alice}","usr_missing"]}
      """

  @sandbox @rule:D9.10 @rule:D9.2
  Scenario: Prices are per institution: setting one's leaves another's as they were
    Given another institution "globex"
    And I act as "globex"
    And the prices are:
      | symbol | price  |
      | AAPL   | 222.00 |
    And a user "gina" with accounts:
      | product    | kyc_status | cash | holdings |
      | securities | approved   | 0.00 | AAPL 1   |
    And I act as my institution
    And the prices are:
      | symbol | price  |
      | AAPL   | 111.00 |
    And I act as "globex"
    When I GET "/users/{gina}/?user_account_id_type=platform"
    Then the response status is 200
    And the JSON at "total_current_market_value" is "222.00"

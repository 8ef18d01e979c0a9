@assumed
Feature: Get Transaction
  GET /transactions/{transaction_id}/ is the authoritative record a transaction event links to
  (spec §6.3 names the link; the endpoint is decisions D7's).

  @sandbox @rule:D7.1 @rule:D7.5 @rule:D7.6
  Scenario: A filled buy is a completed transaction of one order
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
      | robo       | approved   | 0.00    |
    And "alice" buys "100.00" of "AAPL" in "securities" as "o1"
    And the transaction of "o1" fills
    When I GET "/transactions/{o1.transaction_id}/"
    Then the response status is 200
    And the JSON at "transaction_id" is "{o1.transaction_id}"
    And the JSON at "user_account_id" is "alice"
    And the JSON at "product" is "securities"
    And the JSON at "type" is "buy"
    And the JSON at "status" is "completed"
    And the JSON at "created_at" is a timestamp
    And the JSON at "completed_at" is a timestamp
    And the JSON at "orders" has 1 element
    And the JSON at "orders.0.order_id" is "{o1}"
    And the JSON at "orders.0.status" is "completed"
    And I remember the JSON at "completed_at" as "done"
    And the JSON at "orders.0.completed_at" is "{done}"

  @sandbox @rule:D7.4
  Scenario: A fill's notional is quantity × price rounded half-even at the cent
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
    And "alice" buys 0.5 shares of "AAPL" in "securities" as "even"
    And the transaction of "even" fills at "10.01"
    And "alice" buys 0.5 shares of "AAPL" in "securities" as "odd"
    And the transaction of "odd" fills at "10.03"
    When I GET "/transactions/{even.transaction_id}/"
    Then the JSON at "orders.0.quantity" is "0.5"
    And the JSON at "orders.0.notional" is "5.00"
    When I GET "/transactions/{odd.transaction_id}/"
    Then the JSON at "orders.0.notional" is "5.02"

  @sandbox @rule:D7.6
  Scenario: A pending transaction has no completed_at
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
      | robo       | approved   | 0.00    |
    And "alice" buys "100.00" of "AAPL" in "securities" as "o1"
    When I GET "/transactions/{o1.transaction_id}/"
    Then the JSON at "status" is "pending"
    And the JSON at "completed_at" is absent

  @sandbox @rule:D7.1
  Scenario: A robo deposit is one transaction of several legs
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
      | robo       | approved   | 0.00    |
    And "alice" makes a robo deposit of "1000.00" as "d1"
    When I GET "/transactions/{d1}/"
    Then the response status is 200
    And the JSON at "type" is "deposit"
    And the JSON at "product" is "robo"
    And the JSON at "orders" has more than 1 element
    And every element of the JSON at "orders" has "product" equal to "robo"

  @sandbox @rule:D7.1 @rule:D7.6 @rule:D6.8
  Scenario Outline: Cancelling or failing a robo transaction ends it and every leg
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
      | robo       | approved   | 0.00    |
    And "alice" makes a robo deposit of "1000.00" as "d1"
    And I GET "/orders/?status=<status>"
    And the JSON at "total_records" is the JSON "0"
    When the transaction of "d1" <ends>
    And I GET "/transactions/{d1}/"
    Then the JSON at "status" is "<status>"
    And the JSON at "completed_at" is absent
    And every element of the JSON at "orders" has "status" equal to "<status>"
    When I GET "/orders/?status=<status>"
    Then the JSON at "total_records" is the JSON "{d1.legs}"

    Examples:
      | ends        | status   |
      | is canceled | canceled |
      | fails       | failed   |

  @rule:D7.6
  Scenario: An unknown transaction is 404
    When I GET "/transactions/txn_does_not_exist/"
    Then the response status is 404
    And the JSON at "detail" is a string

  @spec @rule:D3.8 @rule:S5.5
  Scenario: This institution's transaction does not exist for another institution's key
    Given the inputs "robo_transaction_id, other_institution_key"
    And I use the API key "{other_institution_key}"
    When I GET "/transactions/txn_nobody_5005/"
    Then the response status is 404
    And I remember the response as "nobody"
    When I GET "/transactions/{robo_transaction_id}/"
    Then the response is the same as "nobody"

  @rule:D7.1 @rule:D7.5
  Scenario: A robo transaction is legs sharing placed_at, completed exactly when every leg is
    Given the inputs "robo_transaction_id"
    When I GET "/transactions/{robo_transaction_id}/"
    Then the response status is 200
    And the transaction is one order, or one leg per symbol sharing placed_at, and completed exactly when every leg is

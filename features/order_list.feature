Feature: Get Order List
  GET /orders/ lists the institution's orders with filters, sorted on placed_at, with cursor
  pagination (spec §2.5, §4.3). Statuses beyond pending, and which fields may be absent, are
  decisions D6's and D7's.

  Background:
    Given the prices are:
      | symbol | price    |
      | AAPL   | 190.00   |
      | MSFT   | 400.00   |
      | BTC    | 60000.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash     | holdings |
      | securities | approved   | 10000.00 | AAPL 5   |
      | crypto     | approved   | 1000.00  |          |
    And a user "bob" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
    And these orders of "alice":
      | as | product    | side | symbol | notional | quantity | outcome  |
      | o1 | securities | buy  | AAPL   | 100.00   |          | filled   |
      | o2 | securities | buy  | MSFT   |          | 2        | pending  |
      | o3 | crypto     | buy  | BTC    | 50.00    |          | canceled |
      | o4 | securities | sell | AAPL   |          | 1        | failed   |
      | o5 | securities | sell | AAPL   |          | 1        | filled   |
    And these orders of "bob":
      | as | product    | side | symbol | notional | quantity | outcome |
      | o6 | securities | buy  | AAPL   | 10.00    |          | pending |

  @spec @sandbox @rule:S2.1 @rule:S2.2 @rule:S2.3 @rule:S2.10 @rule:S2.11 @rule:D5.11
  Scenario: Orders carry the fields of the spec
    When I GET "/orders/"
    Then the response status is 200
    And the JSON at "total_records" is 6
    And the JSON at "per_page" is 25
    And every element of the JSON at "items" has the keys "order_id, user_account_id, product, side, symbol, quantity, notional, fee, status, placed_at, is_recurring_order"
    And every element of the JSON at "items" has "order_id" as a string
    And every element of the JSON at "items" has "quantity" as a decimal string
    And every element of the JSON at "items" has "notional" as a decimal string
    And every element of the JSON at "items" has "fee" as a decimal string
    And every element of the JSON at "items" has "placed_at" as a timestamp
    And every element of the JSON at "items" has "is_recurring_order" as a boolean
    And the JSON at "items.#(order_id=={o1}).completed_at" is a timestamp
    And the JSON at "items.#(order_id=={o2}).status" is "pending"
    And the JSON at "items.#(order_id=={o6}).user_account_id" is "bob"

  @spec @sandbox @rule:S4.3.3 @rule:D6.3
  Scenario: The default order is most recently placed first, asc is the reverse
    When I GET "/orders/"
    Then the JSON at "items" lists "order_id" values "{o6}, {o5}, {o4}, {o3}, {o2}, {o1}"
    When I GET "/orders/?sort_order=asc"
    Then the JSON at "items" lists "order_id" values "{o1}, {o2}, {o3}, {o4}, {o5}, {o6}"

  @spec @sandbox @rule:S4.3.1
  Scenario Outline: Filters narrow the list
    When I GET "/orders/?<filter>"
    Then the JSON at "items" lists "order_id" values "<orders>"

    Examples:
      | filter                           | orders                       |
      | user_account_id=bob              | {o6}                         |
      | user_account_id=alice            | {o5}, {o4}, {o3}, {o2}, {o1} |
      | product=crypto                   | {o3}                         |
      | side=sell                        | {o5}, {o4}                   |
      | side=buy&product=securities      | {o6}, {o2}, {o1}             |
      | status=pending                   | {o6}, {o2}                   |
      | user_account_id=nobody           |                              |

  @assumed @sandbox @rule:D6.8
  Scenario Outline: The status filter knows every lifecycle state
    When I GET "/orders/?status=<status>"
    Then the JSON at "items" lists "order_id" values "<orders>"

    Examples:
      | status    | orders     |
      | completed | {o5}, {o1} |
      | canceled  | {o3}       |
      | failed    | {o4}       |

  @spec @sandbox @rule:S4.3.2
  Scenario: placed_at_start is inclusive and placed_at_end exclusive
    When I GET "/orders/"
    And I remember the JSON at "items.#(order_id=={o3}).placed_at" as "t3"
    When I GET "/orders/?placed_at_start={t3}"
    Then the JSON at "items" lists "order_id" values "{o6}, {o5}, {o4}, {o3}"
    When I GET "/orders/?placed_at_end={t3}"
    Then the JSON at "items" lists "order_id" values "{o2}, {o1}"

  @spec @sandbox @rule:D6.1 @rule:D6.4
  Scenario: Walking the pages visits every order once, in order
    When I page through "/orders/" with per_page 4
    Then the pages list "order_id" values "{o6}, {o5}, {o4}, {o3}, {o2}, {o1}"
    And every page reports total_records 6 and per_page 4
    And the pages visit total_records records, each once by "order_id"
    And the walk ends with an empty page

  @assumed @sandbox @rule:D5.6 @rule:D7.3
  Scenario: Pending orders show what was asked; fills set both amounts
    When I GET "/orders/"
    Then the JSON at "items.#(order_id=={o2}).quantity" is "2"
    And the JSON at "items.#(order_id=={o2}).notional" is "0.00"
    And the JSON at "items.#(order_id=={o6}).notional" is "10.00"
    And the JSON at "items.#(order_id=={o6}).quantity" is "0"
    And the JSON at "items.#(order_id=={o1}).notional" is "100.00"
    And the JSON at "items.#(order_id=={o1}).quantity" is not "0"
    And the JSON at "items.#(order_id=={o5}).notional" is "190.00"
    And the JSON at "items.#(order_id=={o5}).status" is "completed"
    And the JSON at "items.#(order_id=={o1}).fee" is a money string

  @assumed @sandbox @rule:D5.6
  Scenario: A quantity below one keeps its leading zeros and drops its trailing ones
    Given "bob" buys 0.0150 shares of "AAPL" in "securities" as "tiny"
    And "bob" buys 0.00000001 shares of "AAPL" in "securities" as "least"
    When I GET "/orders/"
    Then the JSON at "items.#(order_id=={tiny}).quantity" is "0.015"
    And the JSON at "items.#(order_id=={least}).quantity" is "0.00000001"

  @assumed @sandbox @rule:D4.7 @rule:D7.2
  Scenario: completed_at and recurring_order_id are absent unless they apply
    When I GET "/orders/"
    Then the JSON at "items.#(order_id=={o2}).completed_at" is absent
    And the JSON at "items.#(order_id=={o3}).completed_at" is absent
    And the JSON at "items.#(order_id=={o1}).recurring_order_id" is absent
    And the JSON at "items.#(order_id=={o1}).is_recurring_order" is false

  @assumed @sandbox @rule:D7.2
  Scenario: A recurring order reports its recurring order id
    Given "bob" buys "25.00" of "AAPL" in "securities" as the recurring order "rec_weekly_1" as "r1"
    When I GET "/orders/?user_account_id=bob"
    Then the JSON at "items.#(order_id=={r1}).is_recurring_order" is true
    And the JSON at "items.#(order_id=={r1}).recurring_order_id" is "rec_weekly_1"

  @spec @sandbox @rule:S5.5 @rule:D3.8 @rule:D9.2
  Scenario: Another institution's orders are not listed
    Given another institution "globex"
    And I act as "globex"
    And the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "mallory" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
    And "mallory" buys "10.00" of "AAPL" in "securities" as "m1"
    And I act as my institution
    When I GET "/orders/?per_page=100"
    Then the JSON at "total_records" is 6
    And the JSON at "items" contains no element with "order_id" equal to "{m1}"
    When I GET "/orders/?user_account_id=mallory"
    Then the JSON at "items" is an empty array

  @assumed @sandbox @rule:D6.3 @rule:D7.1
  Scenario: Robo legs share placed_at, and desc is the exact reverse of asc
    Given a user "robin" with accounts:
      | product | kyc_status | cash |
      | robo    | approved   | 0.00 |
    And "robin" makes a robo deposit of "1000.00" as "d1"
    And "robin" makes a robo deposit of "500.00" as "d2"
    When I GET "/orders/?user_account_id=robin&sort_order=asc"
    Then the JSON at "items" has more than 2 elements
    And I remember the JSON at "items.0.placed_at" as "p0"
    And the JSON at "items.1.placed_at" is "{p0}"
    And I remember the JSON at "items.#.order_id|@reverse" as "reversed"
    When I GET "/orders/?user_account_id=robin"
    Then the JSON at "items.#.order_id" is the JSON "{reversed}"

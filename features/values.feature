Feature: Values as the production service writes them
  The production service is FastAPI on pydantic v2: every value it emits is written the way
  pydantic serializes its type, and a Python client built against it parses ours the same way.
  A datetime is ISO 8601 with Z and at most microseconds — six digits, or none when they are
  zero — never Go's nanoseconds (decisions D5). A rotation's overlap ends on the virtual clock
  (decisions D8).

  @assumed @rule:D5.12
  Scenario: A subscription's created_at is written as pydantic writes a datetime
    Given a receiver "r1"
    When I subscribe "r1" to "kyc" events
    Then the response status is 201
    And the JSON at "created_at" is a timestamp as pydantic writes it
    And every timestamp in the JSON is written as pydantic writes it

  @assumed @sandbox @rule:D5.12
  Scenario: An order's and its transaction's times are written as pydantic writes a datetime
    Given a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | securities | approved   | 1000.00 |
    When "alice" buys "100.00" of "AAPL" in "securities" as "o1"
    And the transaction of "o1" fills
    And I GET "/orders/?user_account_id=alice"
    Then the response status is 200
    And the JSON at "items.0.placed_at" is a timestamp as pydantic writes it
    And every timestamp in the JSON is written as pydantic writes it
    When I GET "/transactions/{o1.transaction_id}/"
    Then the response status is 200
    And every timestamp in the JSON is written as pydantic writes it

  @assumed @webhook @rule:D5.12
  Scenario: An event's created_at is written as pydantic writes a datetime
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the event at "created_at" is a timestamp as pydantic writes it

  @assumed @sandbox @webhook @rule:D8.23
  Scenario: Advancing the virtual clock past a rotation's overlap ends it
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the signing secret is rotated with an overlap of 3600 seconds
    And the virtual clock advances 3600 seconds
    And I POST "/webhooks/subscriptions/{r1.kyc}/test"
    Then "r1" receives a delivery
    And the delivery's signature header has 1 v1 entry
    And the delivery is signed with the signing secret

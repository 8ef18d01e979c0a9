@webhook @sandbox
Feature: Event delivery
  kyc and transaction events are delivered to every subscribed callback, signed, at least
  once, with the idempotency key reused on retry; links.self is built at the subscription's
  version and refetching it shows the change (spec §3, §6, §9). Which KYC states are delivered,
  the envelope beyond the named fields and the retry schedule are decisions D8's.

  Background:
    Given the prices are:
      | symbol | price  |
      | AAPL   | 190.00 |
    And a user "alice" with accounts:
      | product    | kyc_status | cash    |
      | crypto     | pending    |         |
      | securities | approved   | 5000.00 |
      | robo       | approved   | 0.00    |

  @spec @rule:S3.1 @rule:S6.1.2 @rule:S6.2 @rule:D8.18
  Scenario: A KYC change is delivered, signed, and Get User Detail shows it
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the delivery's signature header is well-formed
    And the delivery is signed with the signing secret
    And the delivery header "X-Partner-Webhook-Id" equals the event's "event_id"
    And the event at "event_id" is a string
    And the event at "data.kyc_status" is "approved"
    And the event at "data.product" is "crypto"
    And the event's links.self is built at version "v1"
    When I follow the event's links.self
    Then the response status is 200
    And the JSON at "identities.platform_user_identifier" is "{alice}"
    And the JSON at "accounts.#(product==crypto).kyc_status" is "approved"
    And the JSON at "accounts.#(product==crypto).kyc_approved_at" is a timestamp

  @assumed @rule:D8.14
  Scenario: A kyc event has decisions D8's envelope
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the delivery is a POST with the content type "application/json"
    And the event at "event_type" is "kyc"
    And the event at "api_version" is "v1"
    And the event at "is_test" is false
    And the event at "created_at" is a timestamp
    And the event at "data.user_account_id" is "alice"
    And the event at "links.self" is "/v1/users/{alice}/?user_account_id_type=platform"
    And the delivery's signature timestamp is within 300 seconds of now

  @assumed @rule:S3.1 @rule:D8.16
  Scenario Outline: Every actionable KYC state is delivered
    Given a user "carol" with accounts:
      | product | kyc_status | cash  |
      | crypto  | <from>     | 10.00 |
    And a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "carol" moves to "<to>"
    Then "r1" receives a delivery
    And the event at "data.kyc_status" is "<to>"
    And the event at "data.user_account_id" is "carol"

    Examples:
      | from             | to                 |
      | pending          | document_requested |
      | pending          | rejected           |
      | approved         | closed             |
      | approved         | account_takeover   |
      | account_takeover | approved           |

  @assumed @rule:S3.2 @rule:D8.16
  Scenario: A move into pending is intermediate and not delivered
    Given a user "dave" with accounts:
      | product | kyc_status         |
      | crypto  | document_requested |
    And a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "dave" moves to "pending"
    And the "crypto" account of "dave" moves to "approved"
    Then "r1" has received exactly 1 delivery
    And the event at "data.kyc_status" is "approved"

  @spec @rule:S6.1
  Scenario: One subscription covers every delivered value of its event type
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    And the "crypto" account of "alice" moves to "closed"
    Then "r1" receives 2 deliveries

  @spec @rule:S6.1
  Scenario: Events go to every callback subscribed to their type, and only those
    Given a receiver "r1"
    And a receiver "r2"
    And a receiver "rt"
    And "r1" is subscribed to "kyc" events
    And "r2" is subscribed to "kyc" events
    And "rt" is subscribed to "transaction" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And "r2" receives a delivery
    And "r1" has received exactly 1 delivery
    And "rt" receives no delivery

  @spec @rule:S5.5 @rule:D9.2
  Scenario: Another institution's subscriptions receive none of this institution's events
    Given another institution "globex"
    And I act as "globex"
    And a receiver "rg"
    And "rg" is subscribed to "kyc" events
    And I act as my institution
    And a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And "rg" receives no delivery

  @spec @rule:S3.3 @rule:S6.3.1 @rule:D7.5
  Scenario: A fill is delivered once, its link resolves and the account values changed
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    And "alice" buys 2 shares of "AAPL" in "securities" as "o1"
    When I GET "/users/{alice}/?user_account_id_type=platform"
    And I remember the JSON at "accounts.#(product==securities).current_market_value" as "before"
    And the transaction of "o1" fills at "150.00"
    Then "r1" receives a delivery
    And the delivery is signed with the signing secret
    And the delivery header "X-Partner-Webhook-Id" equals the event's "event_id"
    And the event at "data.transaction_id" is "{o1.transaction_id}"
    And the event at "data.status" is "completed"
    And the event's links.self is built at version "v1"
    When I follow the event's links.self
    Then the response status is 200
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==securities).current_market_value" is not "{before}"

  @spec @rule:S6.3.3
  Scenario: A transaction event carries no balances, positions, quantities or amounts
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    And "alice" buys "100.00" of "AAPL" in "securities" as "o1"
    When the transaction of "o1" fills
    Then "r1" receives a delivery
    And the event carries no balances, positions, quantities or amounts
    And the event at "data.positions" is absent
    And the event at "data.fee" is absent

  @assumed @rule:D8.15
  Scenario: A transaction event has decisions D8's envelope and links the transaction record
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    And "alice" buys "100.00" of "AAPL" in "securities" as "o1"
    When the transaction of "o1" fills
    Then "r1" receives a delivery
    And the event at "event_type" is "transaction"
    And the event at "is_test" is false
    And the event at "data.user_account_id" is "alice"
    And the event at "data.product" is "securities"
    And the event at "links.self" is "/v1/transactions/{o1.transaction_id}/"
    When I follow the event's links.self
    Then the JSON at "transaction_id" is "{o1.transaction_id}"
    And the JSON at "status" is "completed"

  @spec @rule:S3.3
  Scenario: Placing, cancelling and failing orders produce no event
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    And "alice" buys "100.00" of "AAPL" in "securities" as "pending"
    And "alice" buys "100.00" of "AAPL" in "securities" as "canceled"
    And the transaction of "canceled" is canceled
    And "alice" buys "100.00" of "AAPL" in "securities" as "failed"
    And the transaction of "failed" fails
    And "alice" buys "100.00" of "AAPL" in "securities" as "filled"
    When the transaction of "filled" fills
    Then "r1" has received exactly 1 delivery
    And the event at "data.transaction_id" is "{filled.transaction_id}"

  @spec @rule:S6.3.2
  Scenario: A robo deposit of several legs is one event for the whole transaction
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    And "alice" makes a robo deposit of "1000.00" as "d1"
    When I GET "/orders/?product=robo&status=pending"
    Then the JSON at "items" has more than 1 element
    When the transaction of "d1" fills
    Then "r1" has received exactly 1 delivery
    And the event at "data.transaction_id" is "{d1}"
    When I follow the event's links.self
    Then the response status is 200

  @assumed @rule:D7.1
  Scenario: The robo transaction record lists every leg
    Given a receiver "r1"
    And "r1" is subscribed to "transaction" events
    And "alice" makes a robo deposit of "1000.00" as "d1"
    When the transaction of "d1" fills
    Then "r1" receives a delivery
    When I follow the event's links.self
    Then the JSON at "orders" has more than 1 element
    And every element of the JSON at "orders" has "status" equal to "completed"

  @spec @rule:S6.1.1 @rule:S6.1.5 @rule:D8.20 @rule:D9.4
  Scenario: A refused delivery is retried with the same idempotency key and body
    Given a receiver "r1" answering 500 to the first 1 delivery
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    When the virtual clock advances 6 seconds
    Then "r1" receives 2 deliveries
    And every delivery to "r1" carries the same X-Partner-Webhook-Id and body
    And every delivery to "r1" is signed with the signing secret
    And the delivery header "X-Partner-Webhook-Id" equals the event's "event_id"

  @assumed @serial @rule:D8.19 @rule:D8.20 @rule:D9.4
  Scenario: A refused delivery follows the retry schedule exactly, then fails
    Given a receiver "r1" answering 500
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the retries of the event to "r1" come "5s, 5m, 30m, 2h, 5h, 10h, 10h" after each attempt, then the delivery fails

  @spec @rule:S6.1.5
  Scenario: Any 2xx answer acknowledges a delivery
    Given a receiver "r1" answering 202
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the sandbox lists the delivery of the event to "r1" as "delivered" with 1 attempt
    When I note how many deliveries "r1" has received
    And the virtual clock advances 3600 seconds
    Then "r1" receives no further delivery

  @assumed @rule:D8.20 @rule:D8.22
  Scenario: Retries are recomputed signatures on the wall clock, and the sandbox records them
    Given a receiver "r1" answering 503 to the first 2 deliveries
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    When the virtual clock advances 6 seconds
    Then "r1" receives 2 deliveries
    When the virtual clock advances 301 seconds
    Then "r1" receives 3 deliveries
    And the delivery's signature timestamp is within 300 seconds of now
    And every delivery to "r1" is signed with the signing secret
    And the sandbox lists the delivery of the event to "r1" as "delivered" with 3 attempts

  @assumed @rule:D8.21 @rule:D8.22
  Scenario: A callback that never answers is retried too
    Given an unreachable receiver "dead"
    And "dead" is subscribed to "kyc" events
    And a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the sandbox lists the delivery of the event to "dead" as "pending" with at least 1 attempt

  @assumed @rule:D8.22
  Scenario: Redelivering an event sends the same event id and body again
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    When the sandbox redelivers the event
    Then "r1" receives 2 deliveries
    And every delivery to "r1" carries the same X-Partner-Webhook-Id and body

  @assumed @rule:D8.5
  Scenario: Deleting a subscription ends its pending deliveries as failed
    Given a receiver "r1" answering 500
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the sandbox lists the delivery of the event to "r1" as "pending" with at least 1 attempt
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    Then the response status is 204
    And the sandbox lists the delivery of the event to "r1" as "failed" with at least 1 attempt
    When I note how many deliveries "r1" has received
    And the virtual clock advances 3600 seconds
    Then "r1" receives no further delivery

  @assumed @rule:D8.5
  Scenario: Deleting a subscription ends its own pending deliveries and no other
    Given a receiver "r1" answering 500
    And "r1" is subscribed to "kyc" events
    And a receiver "r2" answering 500
    And "r2" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And "r2" receives a delivery
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    Then the response status is 204
    And the sandbox lists the delivery of the event to "r1" as "failed" with at least 1 attempt
    And the sandbox lists the delivery of the event to "r2" as "pending" with at least 1 attempt

  @assumed @rule:D8.24
  Scenario: Timestamps that leave the sandbox stay wall-clock however far its clock was advanced
    Given a receiver "r1"
    And "r1" is subscribed to "kyc" events
    When the virtual clock advances 864000 seconds
    And the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the delivery's signature timestamp is within 300 seconds of now
    And the delivery's "created_at" is within 300 seconds of now
    When I GET "/users/{alice}/?user_account_id_type=platform"
    Then the JSON at "accounts.#(product==crypto).kyc_approved_at" is within 300 seconds of now

  @assumed @rule:D9.6
  Scenario: Deleting an institution removes it with its deliveries, and its key stops answering
    Given a receiver "r1" answering 500
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the sandbox lists the delivery of the event to "r1" as "pending" with at least 1 attempt
    When my institution is deleted
    Then the sandbox lists no delivery of the event, nor any of my institution
    When I GET "/users/"
    Then the response status is 401

  @assumed @rule:D8.5
  Scenario: An attempt in flight when its subscription is deleted is still logged
    Given a receiver "r1" holding its answer 500 until released
    And "r1" is subscribed to "kyc" events
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    When I DELETE "/webhooks/subscriptions/{r1.kyc}"
    Then the response status is 204
    When "r1" releases its answers
    Then the sandbox lists the delivery of the event to "r1" as "failed" with 1 attempt

  @spec @rule:S6.1.6 @rule:D2.6
  Scenario: A v1 subscription keeps v1 links while a newer version is served
    Given the deployment serves version "v2"
    And a receiver "r1"
    And a receiver "r2"
    And "r1" is subscribed to "kyc" events
    And "r2" is subscribed to "kyc" events through "v2"
    When the "crypto" account of "alice" moves to "approved"
    Then "r1" receives a delivery
    And the event's links.self is built at version "v1"
    And "r2" receives a delivery
    And the event's links.self is built at version "v2"
    When I follow the event's links.self
    Then the response status is 200

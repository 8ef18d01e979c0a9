Feature: Authentication and scopes
  Every endpoint but health needs x-api-key (spec §5). A key lacking an endpoint's scope gets
  403 with a detail naming the failed check. Missing and unknown keys are 401 (decisions D3), and
  the order of checks is route → 401 → 403 → 422 → business rules.

  @assumed @rule:S4.1 @rule:D3.2
  Scenario Outline: A request without an API key is 401 Not authenticated
    When I <method> "<path>" without an API key
    Then the response status is 401
    And the response is JSON:
      """
      {"detail":"Not authenticated"}
      """
    And the response header "WWW-Authenticate" is "APIKey"

    Examples:
      | method | path                                              |
      | GET    | /users/anyone/?user_account_id_type=platform      |
      | GET    | /users/                                           |
      | GET    | /orders/                                          |
      | POST   | /sessions/revoke/                                 |
      | GET    | /webhooks/subscriptions                           |
      | POST   | /webhooks/subscriptions                           |
      | POST   | /webhooks/subscriptions/sub_nope/test             |

  @assumed @rule:D3.2
  Scenario: An empty API key counts as missing
    When I GET "/users/" with the API key ""
    Then the response status is 401
    And the detail is "Not authenticated"

  @assumed @rule:D3.3
  Scenario: An unknown API key is 401 Invalid API key
    When I GET "/users/" with the API key "sbx_0000000000000000000000000000000000000000"
    Then the response status is 401
    And the response is JSON:
      """
      {"detail":"Invalid API key"}
      """

  @assumed @rule:D3.4
  Scenario Outline: A live key is refused by the sandbox
    Given the deployment is a sandbox
    When I GET "/users/" with the API key "<key>"
    Then the response status is 401
    And the detail is "Invalid API key: live keys cannot be used in the sandbox"

    Examples:
      | key                                           |
      | live_0000000000000000000000000000000000000000 |
      | live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd |

  @assumed @sandbox @rule:D3.3
  Scenario: A revoked key is 401 from then on
    Given a key "old" with scopes "read:user"
    When I GET "/users/" with the key "old"
    Then the response status is 200
    When the key "old" is revoked
    And I GET "/users/" with the key "old"
    Then the response status is 401
    And the detail is "Invalid API key"

  @spec @rule:S5.4 @rule:S5.6 @rule:S7.1 @rule:D3.5
  Scenario Outline: A key without the endpoint's scope is 403 naming the scope
    Given a key "limited" without the "<scope>" scope
    When I <method> "<path>" with the key "limited"
    Then the response status is 403
    And the detail is "key does not have the required scope: <scope>"

    Examples:
      | method | path                                          | scope           |
      | GET    | /users/anyone/?user_account_id_type=platform  | read:user       |
      | POST   | /sessions/revoke/                             | manage:sessions |
      | GET    | /webhooks/subscriptions                       | manage:webhooks |
      | POST   | /webhooks/subscriptions                       | manage:webhooks |
      | POST   | /webhooks/subscriptions/sub_nope/test         | manage:webhooks |

  @assumed @rule:D3.5 @rule:D3.6
  Scenario Outline: Scopes the spec leaves open are decisions D3's
    Given a key "limited" without the "<scope>" scope
    When I <method> "<path>" with the key "limited"
    Then the response status is 403
    And the detail is "key does not have the required scope: <scope>"

    Examples:
      | method | path                                 | scope           |
      | GET    | /users/                              | read:user       |
      | GET    | /orders/                             | read:orders     |
      | GET    | /transactions/txn_nope/              | read:orders     |
      | DELETE | /webhooks/subscriptions/sub_nope     | manage:webhooks |

  @assumed @rule:D3.7
  Scenario: The scope is checked before the parameters
    Given a key "limited" without the "read:user" scope
    When I GET "/users/?per_page=0" with the key "limited"
    Then the response status is 403

  @assumed @rule:D3.7
  Scenario: Authentication is checked before the parameters
    When I GET "/users/?per_page=0" without an API key
    Then the response status is 401

  @spec @sandbox @rule:S5.6
  Scenario: A key of exactly one scope reaches its endpoint and no other
    Given a user "alice"
    And a key "reader" with scopes "read:user"
    When I GET "/users/{alice}/?user_account_id_type=platform" with the key "reader"
    Then the response status is 200
    When I GET "/webhooks/subscriptions" with the key "reader"
    Then the response status is 403
    And the detail is "key does not have the required scope: manage:webhooks"
    When I POST "/sessions/revoke/" with the key "reader"
    Then the response status is 403
    And the detail is "key does not have the required scope: manage:sessions"

  @assumed @rule:D3.1
  Scenario: Every sandbox key is sbx_ and 40 base62 characters, and every one authenticates
    # 24 keys draw each of the 62 characters, the ends of every range among them, many times
    # over: a key check that refused a valid character (a 9, a z) would refuse some of them.
    When the sandbox issues 24 keys with scopes "read:user"
    Then every key issued is sbx_ and 40 base62 characters, and authenticates on "/users/?per_page=1"

  @assumed @rule:D3.7
  Scenario Outline: When several checks would fail, the first of route, key, scope, validation answers
    When I GET "<path>" with the API key "<key>"
    Then the response status is <status>

    Examples:
      | path                                  | key                                           | status |
      | /no-such-endpoint/                    | sbx_0000000000000000000000000000000000000000 | 404    |
      | /users/?per_page=0                    | sbx_0000000000000000000000000000000000000000 | 401    |
      | /users/usr_nobody/                    | sbx_0000000000000000000000000000000000000000 | 401    |

  @assumed @rule:D3.7
  Scenario: A wrong method is 405 whatever the key
    When I DELETE "/users/" without an API key
    Then the response status is 405

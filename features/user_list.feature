Feature: Get User List
  GET /users/ lists the institution's users with filters and cursor pagination (spec §2.4,
  §2.6, §4.2, §8). The cursor is an offset and the sort keys are decisions D6's.

  Background:
    Given these users:
      | user_account_id | created_at           | product    | kyc_status         |
      | u1              | 2026-01-01T10:00:00Z | crypto     | approved           |
      | u2              | 2026-01-02T10:00:00Z | crypto     | pending            |
      | u2              | 2026-01-02T10:00:00Z | securities | approved           |
      | u3              | 2026-01-03T10:00:00Z | securities | rejected           |
      | u4              | 2026-01-04T10:00:00Z | robo       | approved           |
      | u5              | 2026-01-05T10:00:00Z | roth_ira   | document_requested |

  @spec @sandbox @rule:S2.9 @rule:S2.11 @rule:S4.2.5
  Scenario: The list is a pagination envelope of user items, 25 per page by default
    When I GET "/users/"
    Then the response status is 200
    And the JSON at "items" has 5 elements
    And the JSON at "total_records" is 5
    And the JSON at "last_record_number" is an integer
    And the JSON at "per_page" is 25
    And every element of the JSON at "items" has the keys "user_account_id, total_current_market_value, accounts"
    And every element of the JSON at "items" has "total_current_market_value" as a decimal string
    And every element of the JSON at "items" has "accounts" as an array

  @spec @sandbox @rule:S4.2.7
  Scenario: The default order is most recent first
    When I GET "/users/"
    Then the JSON at "items" lists "user_account_id" values "u5, u4, u3, u2, u1"

  @spec @sandbox @rule:S4.2.7
  Scenario: sort_order asc lists the oldest first
    When I GET "/users/?sort_order=asc"
    Then the JSON at "items" lists "user_account_id" values "u1, u2, u3, u4, u5"

  @assumed @sandbox @rule:D6.2
  Scenario: sort_key user_account_id sorts by the partner's id
    Given these users:
      | user_account_id | created_at           |
      | a-late          | 2026-02-01T10:00:00Z |
      | z-early         | 2025-12-01T10:00:00Z |
    When I GET "/users/?sort_key=user_account_id&sort_order=asc"
    Then the JSON at "items" lists "user_account_id" values "a-late, u1, u2, u3, u4, u5, z-early"

  @spec @sandbox @rule:S4.2.1
  Scenario: Filter by user_account_id
    When I GET "/users/?user_account_id=u3"
    Then the JSON at "items" lists "user_account_id" values "u3"
    And the JSON at "total_records" is 1

  @spec @sandbox @rule:S4.2.2
  Scenario: Filter by product
    When I GET "/users/?product=securities"
    Then the JSON at "items" lists "user_account_id" values "u3, u2"

  @spec @sandbox @rule:S4.2.3 @rule:D6.7
  Scenario Outline: Filter by a product's KYC status
    When I GET "/users/?<filter>"
    Then the JSON at "items" lists "user_account_id" values "<users>"

    Examples:
      | filter                                 | users  |
      | crypto_kyc_status=pending              | u2     |
      | crypto_kyc_status=approved             | u1     |
      | securities_kyc_status=approved         | u2     |
      | securities_kyc_status=rejected         | u3     |
      | robo_kyc_status=approved               | u4     |
      | roth_ira_kyc_status=document_requested | u5     |
      | roth_ira_kyc_status=approved           |        |
      | product=crypto&crypto_kyc_status=approved | u1  |

  @assumed @sandbox @rule:D6.5
  Scenario: Time filters accept dates, offsets and naive date-times
    When I GET "/users/?created_at_start=2026-01-03"
    Then the JSON at "items" lists "user_account_id" values "u5, u4, u3"
    When I GET "/users/?created_at_end=2026-01-03T11:00:00%2B01:00"
    Then the JSON at "items" lists "user_account_id" values "u2, u1"
    When I GET "/users/?created_at_end=2026-01-02T10:00:00"
    Then the JSON at "items" lists "user_account_id" values "u1"

  @assumed @sandbox @rule:D6.6
  Scenario: A start at or after the end gives an empty page
    When I GET "/users/?created_at_start=2026-01-04T00:00:00Z&created_at_end=2026-01-02T00:00:00Z"
    Then the response status is 200
    And the JSON at "items" is an empty array
    And the JSON at "total_records" is 0

  @spec @sandbox @rule:D6.4
  Scenario: Walking the pages with the cursor visits every user once, in order
    When I page through "/users/" with per_page 2
    Then the pages list "user_account_id" values "u5, u4, u3, u2, u1"
    And every page reports total_records 5 and per_page 2
    And no page has more than 2 items
    And the pages visit total_records records, each once by "user_account_id"
    And the walk ends with an empty page

  @spec @sandbox @rule:D6.3
  Scenario: Walking ascending pages is the exact reverse
    When I page through "/users/?sort_order=asc" with per_page 3
    Then the pages list "user_account_id" values "u1, u2, u3, u4, u5"

  @assumed @sandbox @rule:D6.1
  Scenario: last_record_number counts the records before the next page
    When I page through "/users/" with per_page 2
    Then each page's last_record_number is the previous one plus its item count
    When I GET "/users/?last_record_number=10"
    Then the response status is 200
    And the JSON at "items" is an empty array
    And the JSON at "total_records" is 5
    And the JSON at "last_record_number" is 10

  @spec @sandbox @rule:S5.5 @rule:D9.2
  Scenario: Another institution's users are not listed
    Given another institution "globex"
    And I act as "globex"
    And a user "mallory"
    And I act as my institution
    When I GET "/users/?user_account_id=mallory"
    Then the JSON at "items" is an empty array
    And the JSON at "total_records" is 0
    When I GET "/users/?per_page=100"
    Then the JSON at "total_records" is 5
    And the JSON at "items" contains no element with "user_account_id" equal to "mallory"

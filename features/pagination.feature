Feature: Pagination limits
  per_page is 1 to 100 (default 25) and last_record_number at least 0 on both lists (spec §4.2,
  §4.3, §8); a refusal is a validation failure (spec §7). The exact 422 items are FastAPI's
  (decisions D4, reference/pydantic-errors.md).

  @spec @rule:S4.2.5
  Scenario Outline: per_page outside 1..100 is refused
    When I GET "<list>?per_page=<per_page>"
    Then the response status is a client error
    And the response is a validation error naming "per_page"

    Examples:
      | list     | per_page |
      | /users/  | 0        |
      | /users/  | 101      |
      | /users/  | 1000     |
      | /orders/ | 0        |
      | /orders/ | 101      |
      | /orders/ | 1000     |

  @spec @rule:S4.2.6
  Scenario Outline: A negative last_record_number is refused
    When I GET "<list>?last_record_number=-1"
    Then the response status is a client error
    And the response is a validation error naming "last_record_number"

    Examples:
      | list     |
      | /users/  |
      | /orders/ |

  @spec @rule:S4.2.5 @rule:D6.1
  Scenario Outline: per_page 1 and 100 are accepted and honoured
    When I GET "<list>?per_page=<per_page>"
    Then the response status is 200
    And the JSON at "per_page" is <per_page>
    And the JSON at "items" is an array

    Examples:
      | list     | per_page |
      | /users/  | 1        |
      | /users/  | 100      |
      | /orders/ | 1        |
      | /orders/ | 100      |

  @spec @rule:S4.2.5 @rule:S4.2.6
  Scenario Outline: The default page size is 25
    When I GET "<list>"
    Then the response status is 200
    And the JSON at "per_page" is 25

    Examples:
      | list     |
      | /users/  |
      | /orders/ |

  @spec @rule:S2.11 @rule:D6.1 @rule:D6.4
  Scenario Outline: Walking a list visits each record once
    When I page through "<list>" with per_page 50
    Then every page reports the same total_records
    And no page has more than 50 items
    And the pages visit total_records records, each once by "<id>"
    And the walk ends with an empty page

    Examples:
      | list     | id              |
      | /users/  | user_account_id |
      | /orders/ | order_id        |

  @assumed @rule:D4.2
  Scenario Outline: Out-of-range and malformed integers are FastAPI's items
    When I GET "/users/?<query>"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[<item>]}
      """

    Examples:
      | query                 | item                                                                                                                                                 |
      | per_page=0            | {"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}               |
      | per_page=101          | {"type":"less_than_equal","loc":["query","per_page"],"msg":"Input should be less than or equal to 100","input":"101","ctx":{"le":100}}                |
      | per_page=1000         | {"type":"less_than_equal","loc":["query","per_page"],"msg":"Input should be less than or equal to 100","input":"1000","ctx":{"le":100}}               |
      | per_page=abc          | {"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}        |
      | per_page=2.5          | {"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"2.5"}        |
      | last_record_number=-1 | {"type":"greater_than_equal","loc":["query","last_record_number"],"msg":"Input should be greater than or equal to 0","input":"-1","ctx":{"ge":0}}   |
      | per_page=1__0         | {"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"1__0"}       |
      | per_page=_10          | {"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"_10"}        |
      | per_page=10_          | {"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"10_"}        |
      | per_page=1_000        | {"type":"less_than_equal","loc":["query","per_page"],"msg":"Input should be less than or equal to 100","input":"1_000","ctx":{"le":100}}             |

  @assumed @rule:D4.3
  Scenario: A 422 is FastAPI's exact bytes: compact separators, key order, items in parameter order
    When I GET "/users/?sort_order=up&last_record_number=-1&per_page=0"
    Then the response status is 422
    And the response header "Content-Type" is "application/json"
    And the response body is exactly:
      """
      {"detail":[{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}},{"type":"greater_than_equal","loc":["query","last_record_number"],"msg":"Input should be greater than or equal to 0","input":"-1","ctx":{"ge":0}},{"type":"enum","loc":["query","sort_order"],"msg":"Input should be 'asc' or 'desc'","input":"up","ctx":{"expected":"'asc' or 'desc'"}}]}
      """

  @assumed @rule:D4.1 @rule:D4.3
  Scenario: Every failed parameter is reported at once, in the spec's parameter order
    When I GET "/orders/?last_record_number=-1&per_page=0"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[
        {"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}},
        {"type":"greater_than_equal","loc":["query","last_record_number"],"msg":"Input should be greater than or equal to 0","input":"-1","ctx":{"ge":0}}
      ]}
      """

  @assumed @rule:S2.3 @rule:D4.2 @rule:D6.8
  Scenario Outline: Enumerated filters refuse unknown values with FastAPI's enum item
    When I GET "<list>?<name>=<value>"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[{"type":"enum","loc":["query","<name>"],"msg":"Input should be <expected>","input":"<value>","ctx":{"expected":"<expected>"}}]}
      """

    Examples:
      | list     | name              | value  | expected                                                                       |
      | /users/  | sort_order        | up     | 'asc' or 'desc'                                                                |
      | /users/  | product           | stocks | 'securities', 'robo', 'crypto' or 'roth_ira'                                   |
      | /users/  | crypto_kyc_status | bogus  | 'pending', 'document_requested', 'approved', 'rejected', 'closed' or 'account_takeover' |
      | /orders/ | side              | hold   | 'buy' or 'sell'                                                                |
      | /orders/ | status            | done   | 'pending', 'completed', 'canceled' or 'failed'                                 |
      | /orders/ | sort_order        | newest | 'asc' or 'desc'                                                                |

  @assumed @rule:D4.2
  Scenario: A malformed date-time filter is FastAPI's datetime item
    When I GET "/users/?created_at_start=not-a-date"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[{"type":"datetime_from_date_parsing","loc":["query","created_at_start"],"msg":"Input should be a valid datetime or date, invalid character in year","input":"not-a-date","ctx":{"error":"invalid character in year"}}]}
      """

  @assumed @rule:D6.2
  Scenario: An unknown sort_key is refused at its location
    When I GET "/users/?sort_key=balance"
    Then the response status is 422
    And the response is a validation error naming "sort_key"

  @assumed @rule:D4.5
  Scenario: Unknown query parameters are ignored
    When I GET "/users/?colour=blue"
    Then the response status is 200

  @assumed @rule:D4.2 @rule:D6.5
  Scenario: A day that does not exist is refused
    When I GET "/users/?created_at_start=2025-02-29"
    Then the response status is 422
    And the response is a validation error naming "created_at_start"

  @assumed @rule:D6.9
  Scenario Outline: A cursor beyond 64 bits is an integer like any other: an empty page echoing it
    When I GET "<list>?last_record_number=100000000000000000000000&per_page=5"
    Then the response status is 200
    And the JSON at "items" is an empty array
    And the response body writes the number "100000000000000000000000" at "last_record_number"

    Examples:
      | list     |
      | /users/  |
      | /orders/ |

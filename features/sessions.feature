Feature: Revoke Member Sessions
  POST /sessions/revoke/ ends every live session of one member: 204 with an empty body; 400
  without a digital banking platform; 404 for no member or no user record (spec §4.4). The
  order of checks, platform ids and the validation items are decisions D4's and D5's.

  @spec @rule:S4.4.1 @rule:D5.3
  Scenario: Revoking a member by its core id and by its dbp id answers 204 with an empty body, also with none live
    Given the inputs "core_member_id, dbp_member_id"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"{core_member_id}","user_account_id_type":"core"}
      """
    Then the response status is 204
    And the response body is empty
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"{dbp_member_id}","user_account_id_type":"dbp"}
      """
    Then the response status is 204
    And the response body is empty

  @spec @sandbox @rule:S4.4.1 @rule:D5.3
  Scenario: Revoking by dbp id ends every session of every user the member names
    Given a user "alice" with 2 live sessions
    And a user "alice-ira" with 1 live session
    And a member with "cif" id "C-2002" and dbp id "D-88" naming "alice, alice-ira"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"D-88","user_account_id_type":"dbp"}
      """
    Then the response status is 204
    And the sandbox shows "alice" with 0 live sessions
    And the sandbox shows "alice-ira" with 0 live sessions

  @assumed @sandbox @rule:D5.3
  Scenario: Revoking by platform id ends that user's sessions, and again is still 204
    Given a user "alice" with 2 live sessions
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"{alice}","user_account_id_type":"platform"}
      """
    Then the response status is 204
    And the sandbox shows "alice" with 0 live sessions
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"{alice}","user_account_id_type":"platform"}
      """
    Then the response status is 204

  @spec @sandbox @rule:S4.4.1
  Scenario: Sessions of other members are untouched
    Given a user "alice" with 2 live sessions
    And a user "bob" with 2 live sessions
    And a member with "member_number" id "M-1001" and dbp id "none" naming "alice"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-1001","user_account_id_type":"core"}
      """
    Then the response status is 204
    And the sandbox shows "bob" with 2 live sessions

  @spec @rule:S4.4.2 @rule:S7.1
  Scenario: An institution without a digital banking platform answers 400
    Given the inputs "vendorless_key"
    And I use the API key "{vendorless_key}"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-1001","user_account_id_type":"core"}
      """
    Then the response status is 400
    And the JSON at "detail" is a string

  @assumed @rule:D5.2 @rule:D4.8
  Scenario Outline: The 400 says no digital banking platform is configured, before any other check
    Given the inputs "vendorless_key"
    And I use the API key "{vendorless_key}"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"<id>","user_account_id_type":"<type>"}
      """
    Then the response is JSON:
      """
      {"detail":"no digital banking platform configured"}
      """

    Examples:
      | id         | type     |
      | M-NOBODY   | core     |
      | D-NOBODY   | dbp      |
      | usr_nobody | platform |

  @assumed @rule:D5.14 @rule:D5.2
  Scenario: Revoking the sessions of an unknown platform id is 404, not 204
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"usr_nobody_5c1e0d","user_account_id_type":"platform"}
      """
    Then the response status is 404
    And the detail is "no member matches user_account_id"

  @spec @rule:S5.5 @rule:D3.8 @rule:D5.14
  Scenario: This institution's user does not exist for another institution's key, by platform id either
    Given the inputs "user_id, other_institution_key"
    And I use the API key "{other_institution_key}"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"usr_nobody_5c1e0d","user_account_id_type":"platform"}
      """
    And I remember the response as "nobody"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"{user_id}","user_account_id_type":"platform"}
      """
    Then the response status is not 204
    And the response is the same as "nobody"

  @spec @rule:S4.4.3
  Scenario: An identifier that matches no member is 404
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-NOBODY","user_account_id_type":"core"}
      """
    Then the response status is 404
    And the JSON at "detail" is a string

  @spec @sandbox @rule:S4.4.3
  Scenario: A member none of whose accounts has a user record is 404
    Given a member with "member_number" id "M-4004" and dbp id "none" naming "usr_missing"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-4004","user_account_id_type":"core"}
      """
    Then the response status is 404

  @assumed @sandbox @rule:D5.2 @rule:D4.8
  Scenario: The 404s name the failed check
    Given a member with "member_number" id "M-4004" and dbp id "none" naming "usr_missing"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-NOBODY","user_account_id_type":"core"}
      """
    Then the detail is "no member matches user_account_id"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-4004","user_account_id_type":"core"}
      """
    Then the detail is "no user record for this member"

  @spec @rule:S5.5 @rule:D3.8
  Scenario: This institution's member does not exist for another institution's key
    Given the inputs "core_member_id, other_institution_key"
    And I use the API key "{other_institution_key}"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-NOBODY-5005","user_account_id_type":"core"}
      """
    And I remember the response as "nobody"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"{core_member_id}","user_account_id_type":"core"}
      """
    Then the response status is not 204
    And the response is the same as "nobody"

  @spec @rule:S4.4.4 @rule:S7.2
  Scenario: A body without the required fields is a validation error
    When I POST "/sessions/revoke/" with JSON:
      """
      {}
      """
    Then the response status is a client error
    And the response is a validation error naming "user_account_id"

  @assumed @rule:D4.2 @rule:D4.4
  Scenario Outline: Malformed bodies are FastAPI's 422 items
    When I POST "/sessions/revoke/" with the raw body "<body>"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":<detail>}
      """

    Examples:
      | body                                                          | detail |
      | {}                                                            | [{"type":"missing","loc":["body","user_account_id"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","user_account_id_type"],"msg":"Field required","input":{}}] |
      | {\"user_account_id\":\"M-1\",\"user_account_id_type\":\"email\"} | [{"type":"enum","loc":["body","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"email","ctx":{"expected":"'platform', 'core' or 'dbp'"}}] |
      | {\"user_account_id\":42,\"user_account_id_type\":\"core\"}       | [{"type":"string_type","loc":["body","user_account_id"],"msg":"Input should be a valid string","input":42}] |
      | \"hello\"                                                     | [{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"hello"}] |
      | hello                                                         | [{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}] |
      | {user_account_id: 1}                                          | [{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}] |
      | {                                                             | [{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}] |
      | {\"user_account_id\":                                          | [{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}] |

  @assumed @rule:D4.4
  Scenario: A missing body is FastAPI's missing body item
    When I POST "/sessions/revoke/"
    Then the response status is 422
    And the response is JSON:
      """
      {"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}
      """

  @assumed @rule:D4.6
  Scenario: A body sent without a content type is parsed as JSON
    When I POST "/sessions/revoke/" with the raw body "{}" and no content type
    Then the response status is 422
    And the response is a validation error naming "user_account_id_type"

  @assumed @rule:D5.2 @rule:D3.7
  Scenario: The body is validated before the digital banking platform is checked
    Given the inputs "vendorless_key"
    And I use the API key "{vendorless_key}"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-1","user_account_id_type":"email"}
      """
    Then the response status is 422

  @assumed @sandbox @rule:D5.2
  Scenario: The id type's vendor is checked before the member
    Given an institution with core vendor "none" and dbp vendor "q2"
    When I POST "/sessions/revoke/" with JSON:
      """
      {"user_account_id":"M-NOBODY","user_account_id_type":"core"}
      """
    Then the response is JSON:
      """
      {"detail":"no vendor configured for user_account_id_type: core"}
      """

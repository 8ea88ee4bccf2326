-- compatible: a function is added; the release before never calls it.
-- A statement that must write its row says so inside PostgreSQL: the error aborts the
-- transaction, so a COMMIT already sent behind the statement, in the same round trip, rolls back
-- instead of committing the rest without it. A check made on the statement's answer would come
-- too late for that COMMIT.
create function remote_session_required(taken boolean, refusal text) returns boolean
language plpgsql as $$
begin
  if taken is not true then
    raise exception '%', refusal using errcode = 'P0001';
  end if;
  return true;
end;
$$;

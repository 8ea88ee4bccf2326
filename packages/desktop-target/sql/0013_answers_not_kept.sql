-- breaking: ended read tasks keep a digest instead of the answer; a replica of the release before serving a returning reader finds no answer there.
-- A relayed read's answer (the desktop's transcript, user prompts included) is handed on, not
-- kept: it waits here only until the reader takes it (or a few minutes, when nobody comes back for
-- it); the completion keeps a digest of it, so an identical replay is still recognised.
alter table desktop_task add column answer jsonb;
create index desktop_task_answers on desktop_task (finished_at) where answer is not null;
-- What ended tasks kept of a desktop's words before: read answers and the human's respond answers.
update desktop_task set completion = jsonb_build_object('status', 'done', 'outcome', jsonb_build_object('action', 'read', 'digest', md5(completion::text)))
  where kind = 'remote_session.read' and state = 'done' and completion ? 'outcome';
update desktop_task set input = input - 'answer' where kind = 'remote_session.respond' and state not in ('queued', 'claimed');
update desktop_task set progress = progress - 'finalText' where progress ? 'finalText';

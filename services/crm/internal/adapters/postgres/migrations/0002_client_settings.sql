-- Client settings the action interface uses: whether generated content is
-- published or deployed without review.
ALTER TABLE clients ADD COLUMN auto_deploy boolean NOT NULL DEFAULT false;

-- An endpoint held back (it did not answer for an attempt's whole
-- time-out, or asked to be left alone with Retry-After) is not claimed
-- from until its hold ends, on every deliverer sharing the database: its
-- deliveries due meanwhile, and those added meanwhile, wait instead of
-- taking its workers again for another time-out. Past holds stay (a hold
-- is only ever compared with now).
ALTER TABLE endpoints ADD COLUMN held_until timestamptz;

-- The claim reads the endpoints held now: a short range of this index,
-- however many endpoints there are.
CREATE INDEX endpoints_held ON endpoints (held_until) WHERE held_until IS NOT NULL;

DROP TABLE IF EXISTS audit_log;
DROP TABLE IF EXISTS payments;
DROP TABLE IF EXISTS documents;
DROP TABLE IF EXISTS appointments;
DROP TABLE IF EXISTS practitioners;
DROP TABLE IF EXISTS users;
DROP TABLE IF EXISTS clinics;

CREATE TABLE clinics (
  id INTEGER PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  city TEXT NOT NULL,
  phone TEXT NOT NULL,
  display_key TEXT NOT NULL,
  deposit_cents INTEGER NOT NULL CHECK (deposit_cents >= 0)
);

CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  clinic_id INTEGER NOT NULL REFERENCES clinics(id),
  email TEXT NOT NULL,
  name TEXT NOT NULL,
  phone TEXT,
  date_of_birth TEXT,
  role TEXT NOT NULL CHECK (role IN ('patient', 'staff', 'admin')),
  password_hash TEXT NOT NULL,
  reset_token TEXT,
  reset_expires TEXT,
  active INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL
);
CREATE INDEX users_email ON users(email);
CREATE INDEX users_clinic_role ON users(clinic_id, role);
CREATE INDEX users_reset_token ON users(reset_token);

CREATE TABLE practitioners (
  id INTEGER PRIMARY KEY,
  clinic_id INTEGER NOT NULL REFERENCES clinics(id),
  name TEXT NOT NULL,
  specialty TEXT NOT NULL,
  slot_minutes INTEGER NOT NULL DEFAULT 30 CHECK (slot_minutes > 0)
);
CREATE INDEX practitioners_clinic ON practitioners(clinic_id);

CREATE TABLE appointments (
  id INTEGER PRIMARY KEY,
  clinic_id INTEGER NOT NULL REFERENCES clinics(id),
  patient_id INTEGER NOT NULL REFERENCES users(id),
  practitioner_id INTEGER NOT NULL REFERENCES practitioners(id),
  starts_at TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'booked'
    CHECK (status IN ('booked', 'checked_in', 'in_room', 'attended', 'no_show', 'cancelled')),
  reason TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL
);
CREATE INDEX appointments_clinic_day ON appointments(clinic_id, starts_at);
CREATE INDEX appointments_practitioner ON appointments(practitioner_id, starts_at);
CREATE INDEX appointments_patient ON appointments(patient_id);

CREATE TABLE documents (
  id INTEGER PRIMARY KEY,
  appointment_id INTEGER NOT NULL REFERENCES appointments(id) ON DELETE CASCADE,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX documents_appointment ON documents(appointment_id);

CREATE TABLE payments (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES users(id),
  appointment_id INTEGER REFERENCES appointments(id),
  kind TEXT NOT NULL CHECK (kind IN ('deposit', 'refund')),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  created_at TEXT NOT NULL
);
CREATE INDEX payments_user ON payments(user_id);
CREATE INDEX payments_appointment ON payments(appointment_id);

CREATE TABLE audit_log (
  id INTEGER PRIMARY KEY,
  clinic_id INTEGER NOT NULL REFERENCES clinics(id),
  actor_id INTEGER REFERENCES users(id),
  action TEXT NOT NULL,
  detail TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX audit_log_clinic ON audit_log(clinic_id, id);

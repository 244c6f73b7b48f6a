CLINICS = [
    {
        "slug": "northside",
        "name": "Northside Physiotherapy",
        "city": "Leeds",
        "phone": "0113 496 0112",
        "display_key": "ns-lobby-7f3k",
        "deposit_cents": 2000,
    },
    {
        "slug": "harbour",
        "name": "Harbour Sports Clinic",
        "city": "Bristol",
        "phone": "0117 496 0340",
        "display_key": "hb-lobby-q81m",
        "deposit_cents": 2500,
    },
]

PRACTITIONERS = {
    "northside": [
        ("Dr Alan Whitfield", "Sports injuries", 30),
        ("Priya Natarajan", "Musculoskeletal physiotherapy", 30),
        ("Tom Gallagher", "Hydrotherapy", 45),
    ],
    "harbour": [
        ("Dr Ines Carvalho", "Orthopaedics", 30),
        ("Marcus Hale", "Rehabilitation", 30),
    ],
}

# Hashes of the demo passwords kept in the qaas repository's config/targets/clinic.secrets.env.
USERS = [
    {
        "key": "maria",
        "clinic": "northside",
        "email": "maria@northside.test",
        "name": "Maria Okafor",
        "role": "admin",
        "phone": "0113 496 0190",
        "password_hash": "pbkdf2:sha256:260000$dCyLGmhhf7CztGgz$116614ee1f6de90eb99ce8db9254e859f653aa8718fa2a923ca05e496e7c69e4",
    },
    {
        "key": "sam",
        "clinic": "northside",
        "email": "sam@northside.test",
        "name": "Sam Reid",
        "role": "staff",
        "phone": "0113 496 0191",
        "password_hash": "pbkdf2:sha256:260000$8zzB47WMrNfow7Z9$0867994f5ef0adc7a1e85b6113b4a58f20741cd234ea932d5efa1dbd36d03397",
    },
    {
        "key": "paula",
        "clinic": "northside",
        "email": "paula@mail.test",
        "name": "Paula Grant",
        "role": "patient",
        "phone": "07700 900123",
        "date_of_birth": "1986-04-12",
        "password_hash": "pbkdf2:sha256:260000$QPb0aUeMzBZ4ydKx$1b2e973a9fbe39cb20cced65121e2e6c9ffb172dac683b7c3b5e7c3269bb395e",
    },
    {
        "key": "peter",
        "clinic": "northside",
        "email": "peter@mail.test",
        "name": "Peter Lang",
        "role": "patient",
        "phone": "07700 900456",
        "date_of_birth": "1972-11-03",
        "password_hash": "pbkdf2:sha256:260000$zbba6bFJmnciC2eJ$739851dbb6a5b96148beb75a005b85b2d34d4c7fa7e809916491cdc9bfcf12ca",
    },
    {
        "key": "hank",
        "clinic": "harbour",
        "email": "hank@harbour.test",
        "name": "Hank Ellis",
        "role": "admin",
        "phone": "0117 496 0341",
        "password_hash": "pbkdf2:sha256:260000$fY2ItsGSE66EoepX$8e17e5511ddb7ed73dc04fa79735ccb21ab748cfc1b545c73cb8262a331fb098",
    },
    {
        "key": "tess",
        "clinic": "harbour",
        "email": "tess@harbour.test",
        "name": "Tess Moreau",
        "role": "staff",
        "phone": "0117 496 0342",
        "password_hash": "pbkdf2:sha256:260000$vxBZcAh7CVsYZoa0$72aa3de5bb6cb6af9a74c5ee9823eda7f9659c40d7a0a0719e0a1ca78a42cba4",
    },
    {
        "key": "quinn",
        "clinic": "harbour",
        "email": "quinn@mail.test",
        "name": "Quinn Adler",
        "role": "patient",
        "phone": "07700 900789",
        "date_of_birth": "1994-07-30",
        "password_hash": "pbkdf2:sha256:260000$ze7Uw7rda5INuXNv$e5f0f60d21daf9f7674a95cc0fc057d99c4c3055aab195ea5944f954f77dee46",
    },
]

# Imported patients have not chosen a password yet; they sign in after a password reset.
IMPORTED_PATIENT_HASH = "pbkdf2:sha256:260000$jTVzDdAi7bIyFgZ8$8c94e64118c9e43b057ec215ab274dcf0a77aea3fd0641eabbe7e08db4a50d84"
IMPORTED_PATIENTS = {"northside": 120, "harbour": 60}

FIRST_NAMES = [
    "Amelia", "Ben", "Chloe", "Daniel", "Ella", "Finn", "Grace", "Harry", "Isla", "Jack",
    "Keira", "Leo", "Maya", "Noah", "Olivia", "Oscar", "Ruby", "Sofia", "Theo", "Zara",
]
LAST_NAMES = [
    "Ahmed", "Brooks", "Clarke", "Davies", "Evans", "Fischer", "Hughes", "Khan", "Morris", "Novak",
    "Patel", "Quinlan", "Shaw", "Turner", "Walsh",
]
REASONS = [
    "Follow-up after knee surgery",
    "Shoulder pain when lifting",
    "Ankle sprain from football",
    "Neck stiffness, desk work",
    "Hamstring strain",
    "Tennis elbow",
    "Post-natal pelvic pain",
    "Running assessment",
]

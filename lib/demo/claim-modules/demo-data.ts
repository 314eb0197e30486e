/** The data of a demo person, as a claim module's backing store would hold it. */
export interface DemoPerson {
  name?: string;
  given_name?: string;
  family_name?: string;
  birthdate?: string;
  email?: string;
  email_verified?: boolean;
  /** Health insurance member number. */
  healthInsuranceNumber?: string;
  /** ID card data verified by reading its NFC chip (level 3). */
  idcard?: { given_name: string; family_name: string; birthdate: string; nationality: string; verified_at: string };
  /** Driving licence data checked by video (level 2). */
  driverslicense?: { given_name: string; family_name: string; birthdate: string; verified_at: string };
  /** E-mail address verified at level 2. */
  verifiedEmail?: { email: string; verified_at: string };
  /** Mobile number verified at level 2 through an operator API. */
  verifiedMobile?: { phone_number: string; verified_at: string };
  /** When the person last completed a mobile one-time-password check (level 2). */
  mobileOtpCompletedAt?: string;
}

/** The demo accounts' data (C8), keyed by account id (the `sub`). */
export const DEMO_PEOPLE: Readonly<Record<string, DemoPerson>> = {
  'demo-0001': {
    name: 'Erika Mustermann',
    given_name: 'Erika',
    family_name: 'Mustermann',
    birthdate: '1964-08-12',
    email: 'erika.mustermann@example.com',
    email_verified: true,
    healthInsuranceNumber: 'A123456780',
    idcard: { given_name: 'Erika', family_name: 'Mustermann', birthdate: '1964-08-12', nationality: 'DE', verified_at: '2025-03-01T10:15:00Z' },
    verifiedEmail: { email: 'erika.mustermann@example.com', verified_at: '2025-03-01T10:20:00Z' },
    verifiedMobile: { phone_number: '+4915123456789', verified_at: '2025-03-02T08:00:00Z' },
    mobileOtpCompletedAt: '2025-03-02T08:01:00Z',
  },
  'demo-0002': {
    name: 'Max Mustermann',
    email: 'max.mustermann@example.com',
    driverslicense: { given_name: 'Max', family_name: 'Mustermann', birthdate: '1962-05-03', verified_at: '2025-04-10T11:30:00Z' },
    verifiedEmail: { email: 'max.mustermann@example.com', verified_at: '2025-04-10T12:00:00Z' },
  },
};

/** Finds a person's data; the modules call this for every resolution. */
export type PersonLookup = (accountId: string) => DemoPerson | undefined | Promise<DemoPerson | undefined>;

/** A lookup over a fixed table. */
export function tableLookup(table: Readonly<Record<string, DemoPerson>> = DEMO_PEOPLE): PersonLookup {
  return (accountId) => table[accountId];
}
